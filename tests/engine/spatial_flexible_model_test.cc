// Issue 22 §1, §3: a spatial flexible body as a body of SpatialModel (engine/spatial_model.h):
// its blocks of M and F are the beam's (engine/flexible_beam_spatial.h), joint rows at its nodes
// agree with finite differences of the constraint values, and a beam pinned at one end swings with
// the compound pendulum's frequency and conserves its energy.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <random>
#include <vector>

#include "contact/joint_limits.h"
#include "engine/block_sparse.h"
#include "engine/flexible_beam_spatial.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"
#include "events/simulation.h"
#include "flexible_test_models.h"

namespace saltus::engine {
namespace {

// The soft free–free beam of the tumbling test (L = 2 m, E = 7e7 Pa, I_xz = 2.25 I_xy), 3
// elements, 6 modes, and a rigid link. `twisting`: with torsion (G = E/260, J = I_p: the 8
// lowest modes hold 3 torsion modes) and the joints at nodes at arms of their sections.
// `extra` adds items (springs, frictions, joints 7…) before the model is built.
std::shared_ptr<const SpatialModel> BeamAndLink(
    bool with_joints, bool twisting = false,
    const std::function<void(SpatialModelBuilder&)>& extra = nullptr) {
  BeamProperties p = testing::KaneBeam(3, twisting ? 8 : 6, BeamReference::kFree, 2.0);
  p.youngs_modulus = 7e7;
  SpatialModelBuilder builder;
  SpatialBody link;
  link.name = "link";
  link.mass = 0.7;
  link.inertia = Eigen::Vector3d(0.02, 0.03, 0.04).asDiagonal();
  link.com = Eigen::Vector3d(0.1, 0.0, -0.05);
  builder.AddBody(link);
  SpatialBody beam;
  beam.name = "beam";
  beam.beam = p;
  beam.second_moment_xz = 4.5e-7;
  if (twisting) beam.torsion = BeamTorsion{p.youngs_modulus / 260, 6.5e-7};
  builder.AddBody(beam);
  builder.SetGravity(Eigen::Vector3d(0.3, -1.0, -9.81));
  if (!with_joints) {
    if (extra) extra(builder);
    return builder.Build();
  }
  // Every row type with a node on side a and on side b (the rows need not be satisfied).
  auto joint = [&](const char* name, SpatialJointType type, int a, int node_a, int b, int node_b) {
    SpatialJoint j;
    j.name = name;
    j.type = type;
    j.body_a = a;
    j.body_b = b;
    j.node_a = node_a;
    j.node_b = node_b;
    j.axis_a = Eigen::Vector3d(0.2, 0.3, 1.0);
    j.axis_b = Eigen::Vector3d(0.1, -0.4, 1.0);
    if (node_a < 0 && a != kGround) j.point_a = Eigen::Vector3d(0.2, 0.1, 0.0);
    if (node_b < 0 && b != kGround) j.point_b = Eigen::Vector3d(-0.1, 0.05, 0.1);
    j.length = 1.3;
    if (twisting && node_a >= 0) j.arm_a = Eigen::Vector3d(0.01, 0.08, -0.05);
    if (twisting && node_b >= 0) j.arm_b = Eigen::Vector3d(-0.02, -0.06, 0.09);
    builder.AddJoint(j);
  };
  joint("pin", SpatialJointType::kSpherical, kGround, -1, 1, 0);
  joint("hinge", SpatialJointType::kRevolute, 1, 3, 0, -1);
  joint("plane", SpatialJointType::kPointOnPlane, 0, -1, 1, 2);
  joint("slide", SpatialJointType::kCylindrical, 1, 1, 0, -1);
  joint("rod", SpatialJointType::kDistance, 1, 2, kGround, -1);
  // The section's axes on side b (dot1 rows with w_b turned), a prismatic joint at a node on
  // side b, and drivers: an angle driver with the node on side a (ū(t) of the section) and a
  // displacement driver.
  joint("weld", SpatialJointType::kFixed, 0, -1, 1, 3);
  joint("guide", SpatialJointType::kPrismatic, kGround, -1, 1, 1);
  TimeProfile sine;
  sine.kind = TimeProfile::Kind::kSine;
  sine.value0 = 0.2;
  sine.amplitude = 0.4;
  sine.frequency = 3.0;
  sine.phase = 0.5;
  builder.AddDriver(SpatialDriver{"turn", 1, DriverKind::kAngle, sine});
  builder.AddDriver(SpatialDriver{"push", 6, DriverKind::kDisplacement, sine});
  if (extra) extra(builder);
  return builder.Build();
}

// A state with every modal amplitude deflected and moving.
void RandomState(const SpatialModel& model, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  *q = model.InitialPositions();
  *v = Eigen::VectorXd::NullaryExpr(model.num_v(), [&] { return u(rng); });
  for (int b = 0; b < model.num_bodies(); ++b) {
    const int q0 = model.QOffset(b);
    q->segment<3>(q0) = Eigen::Vector3d(u(rng), u(rng), u(rng));
    q->segment<4>(q0 + 3) = Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
    if (const SpatialFlexibleBeam* beam = model.beam(b)) {
      for (int i = 0; i < beam->num_modes(); ++i) (*q)(q0 + 7 + i) = 0.05 * u(rng);
    }
  }
}

TEST(SpatialFlexibleModel, BlocksAreTheBeamsAndTheNamesIncludeTheModes) {
  const auto model = BeamAndLink(false);
  const SpatialMultibodySystem system(model);
  const SpatialFlexibleBeam& beam = *model->beam(1);
  const int m = beam.num_modes();
  ASSERT_EQ(model->beam(0), nullptr);
  EXPECT_EQ(model->QOffset(1), 7);
  EXPECT_EQ(model->VOffset(1), 6);
  EXPECT_EQ(model->num_q(), 14 + m);
  EXPECT_EQ(model->num_v(), 12 + m);
  EXPECT_FALSE(system.HasConstantMassMatrix());
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  Eigen::MatrixXd M;
  system.MassMatrix(q, &M);
  Eigen::VectorXd F;
  system.Forces(0.0, q, v, &F);
  // The beam's own evaluation of its blocks (same code, so equal to round-off: 1e-12 relative).
  const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(10));
  Eigen::MatrixXd M_b(6 + m, 6 + m);
  beam.MassMatrix(R, q.segment(14, m), M_b);
  Eigen::VectorXd F_b = Eigen::VectorXd::Zero(6 + m);
  beam.AddForces(R, q.segment(14, m), v.segment<3>(9), v.segment(12, m), model->gravity(), F_b);
  EXPECT_LT((M.block(6, 6, 6 + m, 6 + m) - M_b).cwiseAbs().maxCoeff(),
            1e-12 * M_b.cwiseAbs().maxCoeff());
  EXPECT_EQ(M.block(0, 6, 6, 6 + m).cwiseAbs().maxCoeff(), 0.0);
  EXPECT_LT((F.tail(6 + m) - F_b).cwiseAbs().maxCoeff(), 1e-12 * F_b.cwiseAbs().maxCoeff());
  // The rigid link's block is the rigid body's: m I₃ on ṙ.
  EXPECT_DOUBLE_EQ(M(0, 0), 0.7);
  // Gravity and elastic forces derive from the potential: F(v = 0) = −∂V/∂θ along q ⊕ h e_i,
  // central differences (h = 1e-6: truncation ~1e-12 V''', round-off ~1e-10 V; bound 1e-6).
  system.Forces(0.0, q, Eigen::VectorXd::Zero(model->num_v()), &F);
  for (int i = 0; i < model->num_v(); ++i) {
    const double h = 1e-6;
    Eigen::VectorXd qp, qm;
    system.IntegratePosition(q, Eigen::VectorXd::Unit(model->num_v(), i), h, &qp);
    system.IntegratePosition(q, Eigen::VectorXd::Unit(model->num_v(), i), -h, &qm);
    const double dV = (system.PotentialEnergy(0.0, qp) - system.PotentialEnergy(0.0, qm)) / (2 * h);
    EXPECT_NEAR(F(i), -dV, 1e-6 * std::max(1.0, std::abs(dV))) << system.VelocityName(i);
  }
  // PositionDifference inverts IntegratePosition on every entry, the modal ones included.
  Eigen::VectorXd q1, theta;
  system.IntegratePosition(q, v, 0.3, &q1);
  ASSERT_TRUE(system.PositionDifference(q1, q, &theta));
  EXPECT_LT((theta - 0.3 * v).cwiseAbs().maxCoeff(), 1e-13);
  EXPECT_EQ(system.PositionName(14), "beam.eta1");
  EXPECT_EQ(system.PositionName(13 + m), "beam.eta" + std::to_string(m));
  EXPECT_EQ(system.PositionName(7), "beam.x");
  EXPECT_EQ(system.VelocityName(12), "beam.veta1");
  EXPECT_EQ(system.VelocityName(11), "beam.wz");
  // Block-sparse paths are for rigid models only: the dense path is taken.
  MassBlocks blocks;
  EXPECT_FALSE(system.BlockSparseMatrices(0.0, q, {}, &blocks, nullptr));
}

// G against central differences of g, g_t against differences in t and γ against second
// differences along (t0 + t, q ⊕ t v) (the drivers move with t), for the joint rows of `model`
// (BeamAndLink with joints) at RandomState and t0 = 0.3 s; returns G.
Eigen::MatrixXd ExpectJointRowsMatchDifferences(const std::shared_ptr<const SpatialModel>& model) {
  const SpatialMultibodySystem system(model);
  const int nv = model->num_v();
  const double t0 = 0.3;
  EXPECT_EQ(system.num_joint_rows(), 3 + 5 + 1 + 4 + 1 + 6 + 5 + 2);
  std::vector<int> rows(static_cast<std::size_t>(system.num_joint_rows()));
  for (int r = 0; r < system.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  Eigen::MatrixXd G;
  system.ConstraintJacobian(t0, q, rows, &G);
  auto g_at = [&](const Eigen::VectorXd& direction, double h, double t) {
    Eigen::VectorXd qh, g;
    system.IntegratePosition(q, direction, h, &qh);
    system.ConstraintValues(t, qh, rows, &g);
    return g;
  };
  // Column i of G is ∂g/∂θ_i along q ⊕ h e_i: central differences, h = 1e-6 (truncation
  // ~1e-12 g''', round-off ~1e-10 g for g = O(1)); bound 1e-7.
  for (int i = 0; i < nv; ++i) {
    const Eigen::VectorXd e = Eigen::VectorXd::Unit(nv, i);
    const Eigen::VectorXd fd = (g_at(e, 1e-6, t0) - g_at(e, -1e-6, t0)) / 2e-6;
    EXPECT_LT((G.col(i) - fd).cwiseAbs().maxCoeff(), 1e-7) << system.VelocityName(i);
  }
  // The modal columns are not zero: the rows see the deformation.
  EXPECT_GT(G.rightCols(model->beam(1)->num_modes()).cwiseAbs().maxCoeff(), 0.1);
  // g_t = ∂g/∂t at fixed q: central differences in t, h = 1e-6, bound 1e-7 (as G).
  const Eigen::VectorXd none = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd g_t;
  system.ConstraintTimeDerivative(t0, q, rows, &g_t);
  const Eigen::VectorXd g_t_fd = (g_at(none, 0.0, t0 + 1e-6) - g_at(none, 0.0, t0 - 1e-6)) / 2e-6;
  EXPECT_LT((g_t - g_t_fd).cwiseAbs().maxCoeff(), 1e-7);
  EXPECT_GT(g_t.cwiseAbs().maxCoeff(), 0.1);  // the drivers' rows
  // γ = g̈ − G v̇ is g̈ along (t0 + t, q ⊕ t v), where v is constant (body-frame ω, η̇): second
  // differences, h = 1e-4 (truncation ~1e-8 g'''', round-off ~1e-8 g); bound 1e-5.
  Eigen::VectorXd gamma, g0;
  system.ConstraintGamma(t0, q, v, rows, &gamma);
  system.ConstraintValues(t0, q, rows, &g0);
  const double h = 1e-4;
  const Eigen::VectorXd fd = (g_at(v, h, t0 + h) - 2.0 * g0 + g_at(v, -h, t0 - h)) / (h * h);
  for (int r = 0; r < system.num_joint_rows(); ++r) {
    EXPECT_NEAR(gamma(r), fd(r), 1e-5 * std::max(1.0, std::abs(fd(r))))
        << system.constraint_info(r).name;
  }
  return G;
}

TEST(SpatialFlexibleModel, JointRowsAtNodesMatchFiniteDifferences) {
  ExpectJointRowsMatchDifferences(BeamAndLink(true));
}

TEST(SpatialFlexibleModel, JointRowsAtArmsOfTwistingSectionsMatchFiniteDifferences) {
  // The joints at nodes at arms of 5–11 cm on a beam with torsion, its 3 torsion modes twisted
  // (η = 0.05 twists an end by ~1 rad: a unit η of the first is ~24 rad) and twisting: the arm's
  // columns (e_x × R_x(φ) d) s_φ, its rate φ̇ e_x × R_x(φ) d and the twist's centripetal term φ̇² e_x
  // × (e_x × R_x(φ) d) in γ, with the tolerances above. The twist columns are in G.
  const auto model = BeamAndLink(true, true);
  const SpatialFlexibleBeam& beam = *model->beam(1);
  int twisting = 0;
  for (const SpatialModeKind kind : beam.mode_kinds())
    twisting += kind == SpatialModeKind::kTorsion;
  ASSERT_EQ(twisting, 3);
  const Eigen::MatrixXd G = ExpectJointRowsMatchDifferences(model);
  double twist_columns = 0.0;
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion) {
      twist_columns = std::max(twist_columns, G.col(12 + j).cwiseAbs().maxCoeff());
    }
  }
  EXPECT_GT(twist_columns, 0.1);
}

TEST(SpatialFlexibleModel, JointAxesAtANodeTurnWithTheSectionsSlopesAndTwist) {
  // Row weld.rot3 = x_a · y_b of the fixed joint with side b at node 3: y_b is an axis of the
  // section there, R Λ ȳ_b, so the row has on η̇ the columns (Λȳ_b × Rᵀx_a)ᵀ E (section header).
  // At the initial state (every frame the world's, η = 0: Λ = I) with
  // E = e_z s_v' − e_y s_w' + e_x s_φ, they are ℓ_z s_v' − ℓ_y s_w' + ℓ_x s_φ, ℓ = ȳ_b × x̄_a:
  // exact to round-off (1e-14). Axes held by the floating frame had zero modal columns here.
  const auto model = BeamAndLink(true, true);
  const SpatialMultibodySystem system(model);
  const SpatialFlexibleBeam& beam = *model->beam(1);
  const Eigen::VectorXd q = model->InitialPositions();
  std::vector<int> rows(static_cast<std::size_t>(system.num_joint_rows()));
  for (int r = 0; r < system.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  Eigen::MatrixXd G;
  system.ConstraintJacobian(0.3, q, rows, &G);
  int rot3 = -1;
  for (int r = 0; r < system.num_joint_rows(); ++r) {
    if (system.constraint_info(r).name == "weld.rot3") rot3 = r;
  }
  ASSERT_GE(rot3, 0);
  const JointFrames& f = model->joint_frames()[5];
  const Eigen::Vector3d lever = f.axes_b.col(1).cross(f.axes_a.col(0));
  const SpatialBeamPoint node = beam.PointAt(beam.NodeX(3));
  const Eigen::RowVectorXd expected =
      lever.z() * node.slope_v - lever.y() * node.slope_w + lever.x() * node.twist;
  const int m = beam.num_modes();
  EXPECT_LT((G.row(rot3).tail(m) - expected).cwiseAbs().maxCoeff(), 1e-14);
  EXPECT_GT(expected.cwiseAbs().maxCoeff(), 0.1);
}

// Static equilibrium F(q) + Gᵀλ = 0, g(q) = 0 of `system` with its joint rows, from its initial
// positions: Newton on the increments θ (q ⊕ θ) and λ, the Jacobian of F + Gᵀλ and of g by central
// differences along q ⊕ h e_i (h = 1e-6). Returns q.
Eigen::VectorXd StaticEquilibrium(const SpatialMultibodySystem& system, const SpatialModel& model) {
  const int nv = model.num_v(), nc = system.num_joint_rows();
  std::vector<int> rows(static_cast<std::size_t>(nc));
  for (int r = 0; r < nc; ++r) rows[static_cast<std::size_t>(r)] = r;
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd q = model.InitialPositions(), lambda = Eigen::VectorXd::Zero(nc);
  const auto residual = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& l) {
    Eigen::VectorXd F, g;
    Eigen::MatrixXd G;
    system.Forces(0.0, x, zero, &F);
    system.ConstraintJacobian(0.0, x, rows, &G);
    system.ConstraintValues(0.0, x, rows, &g);
    Eigen::VectorXd r(nv + nc);
    r << F + G.transpose() * l, g;
    return r;
  };
  for (int iteration = 0; iteration < 8; ++iteration) {
    Eigen::MatrixXd J(nv + nc, nv + nc);
    for (int i = 0; i < nv; ++i) {
      Eigen::VectorXd qp, qm;
      system.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), 1e-6, &qp);
      system.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), -1e-6, &qm);
      J.col(i) = (residual(qp, lambda) - residual(qm, lambda)) / 2e-6;
    }
    Eigen::MatrixXd G;
    system.ConstraintJacobian(0.0, q, rows, &G);
    J.topRightCorner(nv, nc) = G.transpose();
    J.bottomRightCorner(nc, nc).setZero();
    const Eigen::VectorXd step = J.fullPivLu().solve(-residual(q, lambda));
    Eigen::VectorXd q_next;
    system.IntegratePosition(q, step.head(nv), 1.0, &q_next);
    q = q_next;
    lambda += step.tail(nc);
  }
  return q;
}

TEST(SpatialFlexibleModel, FixedJointAtANodeClampsItsSection) {
  // A free–free beam (reference: free, mean axes; 1 m Kane section, I_xz = 2.25 I_xy, with
  // torsion G = E/2.6, J = 3e-7 m⁴; 4 elements and all 24 modes) welded to the ground by a fixed
  // joint at node 0 is a cantilever only if the joint holds node 0's section — its slopes and
  // its twist — not the floating frame's axes, which the free modes turn against the section.
  // Three load cases on the tip (world, constant): a force F_y, a force F_z, a torque T_x on the
  // tip section (generalized forces (f, ū × Rᵀf, Bᵀ Rᵀ f) and (0, RᵀT, Eᵀ RᵀT)). The static tip
  // deflections are the closed forms F L³/(3 E I) in each plane and the twist T L/(G J), exact
  // for the Hermite bending and the linear shaft elements with every mode kept. The loads give
  // 1e-4 (m, rad); one load at a time, the geometric nonlinearity (foreshortening) is of order
  // slope² = 2e-8 relative (measured 1.1e-8 in v and w, < 1e-12 in the twist): bound 1e-6
  // relative. With the joint holding the frame's axes instead (the earlier model) the same solve
  // gave v = w = 1.4e-6 m and a twist of 3.3e-5 rad: no cantilever.
  const double L = 1.0, I_xz = 4.5e-7, J = 3e-7;
  const BeamProperties p = testing::KaneBeam(4, 24, BeamReference::kFree, L);
  const double G_shear = p.youngs_modulus / 2.6;
  const double deflection = 1e-4;
  const Eigen::Vector3d closed_form_loads(3.0 * p.youngs_modulus * p.second_moment / (L * L * L),
                                          3.0 * p.youngs_modulus * I_xz / (L * L * L),
                                          G_shear * J / L);
  for (int load = 0; load < 3; ++load) {
    Eigen::Vector3d force = Eigen::Vector3d::Zero(), torque = Eigen::Vector3d::Zero();
    if (load < 2) force(load + 1) = closed_form_loads(load) * deflection;
    if (load == 2) torque.x() = closed_form_loads(2) * deflection;
    SpatialModelBuilder builder;
    SpatialBody body;
    body.name = "beam";
    body.beam = p;
    body.second_moment_xz = I_xz;
    body.torsion = BeamTorsion{G_shear, J};
    builder.AddBody(body);
    SpatialJoint weld;
    weld.name = "weld";
    weld.type = SpatialJointType::kFixed;
    weld.body_a = kGround;
    weld.body_b = 0;
    weld.node_b = 0;
    builder.AddJoint(weld);
    builder.SetGravity(Eigen::Vector3d::Zero());
    std::shared_ptr<const SpatialModel> model;
    const auto tip = [&model](const Eigen::VectorXd& q) {
      const SpatialFlexibleBeam& beam = *model->beam(0);
      const SpatialBeamPoint point = beam.PointAt(beam.length());
      const auto eta = q.segment(7, beam.num_modes());
      return std::pair(beam.Motion(point, eta, Eigen::VectorXd()),
                       beam.Section(point, eta, Eigen::VectorXd()));
    };
    builder.SetForceCallback(
        [&](double, const Eigen::VectorXd& q, const Eigen::VectorXd&, Eigen::VectorXd* F) {
          const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(3));
          const auto [motion, section] = tip(q);
          const Eigen::Vector3d f = R.transpose() * force, n = R.transpose() * torque;
          F->segment<3>(0) += force;
          F->segment<3>(3) += motion.u.cross(f) + n;
          F->tail(motion.B.cols()) += motion.B.transpose() * f + section.E.transpose() * n;
        });
    model = builder.Build();
    const SpatialMultibodySystem system(model);
    const Eigen::VectorXd q = StaticEquilibrium(system, *model);
    const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(3));
    const auto [motion, section] = tip(q);
    const Eigen::Vector3d p_tip = q.head<3>() + R * motion.u;
    const Eigen::Matrix3d axes = R * section.turn;  // the tip section's axes in the world
    const Eigen::Vector3d measured(p_tip.y(), p_tip.z(), std::atan2(axes(2, 1), axes(1, 1)));
    std::cout << std::setprecision(10) << "welded free beam, load " << load << ": tip v, w, twist ("
              << measured.transpose() << "), closed form " << deflection << "\n";
    EXPECT_NEAR(measured(load), deflection, 1e-6 * deflection) << "load case " << load;
    for (int other = 0; other < 3; ++other) {
      if (other != load) {
        EXPECT_LT(std::abs(measured(other)), 1e-6 * deflection) << "load case " << load;
      }
    }
  }
}

TEST(SpatialFlexibleModel, BadNodesAreRejectedNamingTheJoint) {
  SpatialModelBuilder builder;
  SpatialBody rigid;
  rigid.name = "rigid";
  builder.AddBody(rigid);
  SpatialBody beam;
  beam.name = "beam";
  beam.beam = testing::KaneBeam(3, 4, BeamReference::kClamped, 1.0);
  beam.second_moment_xz = 2e-7;
  builder.AddBody(beam);
  SpatialJoint j;
  j.name = "j";
  j.type = SpatialJointType::kSpherical;
  j.body_a = kGround;
  j.body_b = 1;
  j.node_b = 4;  // nodes 0..3
  EXPECT_THROW(
      {
        try {
          builder.AddJoint(j);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("'j'"), std::string::npos) << e.what();
          EXPECT_NE(std::string(e.what()).find("node_b 4"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  j.node_b = -1;
  j.body_b = 0;
  j.node_a = 0;  // the ground has no nodes
  EXPECT_THROW(builder.AddJoint(j), std::invalid_argument);
  j.body_a = 0;  // a rigid body has none either
  j.body_b = 1;
  EXPECT_THROW(builder.AddJoint(j), std::invalid_argument);
  j.body_a = kGround;
  j.node_a = -1;
  j.node_b = 3;
  j.point_b = Eigen::Vector3d(0.1, 0, 0);  // a node is the point
  EXPECT_THROW(builder.AddJoint(j), std::invalid_argument);
  beam.name = "beam2";
  beam.second_moment_xz = -1.0;
  EXPECT_THROW(builder.AddBody(beam), std::invalid_argument);
  // A torsional spring or prismatic friction on a joint at a node: accepted (their angle, slip
  // and forces are the section's: TorsionalSpringAtANode…, PrismaticFrictionAtANode…).
  SpatialJoint hinge;
  hinge.name = "hinge";
  hinge.type = SpatialJointType::kRevolute;
  hinge.body_a = kGround;
  hinge.body_b = 1;
  hinge.node_b = 3;
  const int h = builder.AddJoint(hinge);
  hinge.name = "slide";
  hinge.type = SpatialJointType::kPrismatic;
  const int s = builder.AddJoint(hinge);
  EXPECT_NO_THROW(builder.AddTorsionalSpring(SpatialTorsionalSpring{"spring", h, 1.0, 0.0, 0.0}));
  EXPECT_NO_THROW(builder.AddPrismaticFriction(SpatialPrismaticFriction{"rub", s, 0.3}));
  // Still refused by type: a spring on the prismatic joint, friction on the revolute one.
  EXPECT_THROW(builder.AddTorsionalSpring(SpatialTorsionalSpring{"spring2", s, 1.0, 0.0, 0.0}),
               std::invalid_argument);
  EXPECT_THROW(builder.AddPrismaticFriction(SpatialPrismaticFriction{"rub2", h, 0.3}),
               std::invalid_argument);
}

// ---- Torsional springs, prismatic friction and joint limits at nodes
// ----------------------------- The reference quantities are computed here from the beam's section
// (SpatialFlexibleBeam::Motion and Section, checked against differences in
// flexible_beam_spatial_test.cc), not from the model's JointSideOf: the node's point r + R (ū + Λ
// d) and the joint's axes R Λ ā.

// World point and axes of side a (side_b false) or b of joint j at q.
struct SideFrame {
  Eigen::Vector3d p;
  Eigen::Matrix3d axes;
};
SideFrame FrameOf(const SpatialModel& model, int j, bool side_b, const Eigen::VectorXd& q) {
  const SpatialJoint& joint = model.joints()[static_cast<std::size_t>(j)];
  const JointFrames& f = model.joint_frames()[static_cast<std::size_t>(j)];
  const int body = side_b ? joint.body_b : joint.body_a;
  const int node = side_b ? joint.node_b : joint.node_a;
  const Eigen::Matrix3d& axes = side_b ? f.axes_b : f.axes_a;
  if (body == kGround) return {side_b ? f.point_b : f.point_a, axes};
  const Eigen::Vector3d r = q.segment<3>(model.QOffset(body));
  const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(model.QOffset(body) + 3));
  if (node < 0) return {r + R * (side_b ? f.point_b : f.point_a), R * axes};
  const SpatialFlexibleBeam& beam = *model.beam(body);
  const SpatialBeamPoint at = beam.PointAt(beam.NodeX(node));
  const auto eta = q.segment(model.QOffset(body) + 7, beam.num_modes());
  const Eigen::VectorXd none;
  const Eigen::Matrix3d turn = beam.Section(at, eta, none).turn;
  const Eigen::Vector3d u = beam.Motion(at, eta, none).u;
  return {r + R * (u + turn * (side_b ? joint.arm_b : joint.arm_a)), R * turn * axes};
}
// The revolute angle atan2(x_b·y_a, x_b·x_a) between the two sides' frames.
double AngleBetween(const SpatialModel& model, int j, const Eigen::VectorXd& q) {
  const SideFrame a = FrameOf(model, j, false, q), b = FrameOf(model, j, true, q);
  return std::atan2(b.axes.col(0).dot(a.axes.col(1)), b.axes.col(0).dot(a.axes.col(0)));
}
// d/dt f(q ⊕ t u) at t = 0 by central differences, h = 1e-6 (truncation ~1e-12 f''', round-off
// ~1e-10 f for f of order 1).
template <class Function>
double RateAlong(const SpatialMultibodySystem& system, const Eigen::VectorXd& q,
                 const Eigen::VectorXd& u, Function f) {
  Eigen::VectorXd qp, qm;
  system.IntegratePosition(q, u, 1e-6, &qp);
  system.IntegratePosition(q, u, -1e-6, &qm);
  return (f(qp) - f(qm)) / 2e-6;
}
// The prismatic joint "rail" (joint 7): side a at an arm of node 2 of the beam, its axis an axis
// of that section; side b the link.
int AddRail(SpatialModelBuilder& b) {
  SpatialJoint rail;
  rail.name = "rail";
  rail.type = SpatialJointType::kPrismatic;
  rail.body_a = 1;
  rail.node_a = 2;
  rail.arm_a = Eigen::Vector3d(0.0, 0.04, 0.03);
  rail.body_b = 0;
  rail.point_b = Eigen::Vector3d(0.05, -0.1, 0.02);
  rail.axis_a = Eigen::Vector3d(1.0, 0.2, -0.1);
  rail.axis_b = rail.axis_a;
  return b.AddJoint(rail);
}

TEST(SpatialFlexibleModel, TorsionalSpringAtANodeDerivesFromTheSectionsAngle) {
  // A torsional spring-damper on "hinge" (revolute, side a at node 3 of the twisting beam, at an
  // arm; side b the link). Its generalized force, F(with) − F(without), must be
  //   −k (θ − θ₀) ∂θ/∂θᵢ − c θ̇ ∂θ/∂θᵢ,   θ̇ = Σ ∂θ/∂θᵢ vᵢ,
  // with θ the angle between the section's and the link's axes and ∂θ/∂θᵢ its central
  // differences along q ⊕ h eᵢ: bound 1e-7 (the differences' error) times the force's scale. Its
  // modal entries are those of the section's rotation (Eᵀ Rᵀ n): they must not vanish.
  const double k = 3.0, c = 0.7, angle0 = 0.2;
  const auto plain = BeamAndLink(true, true);
  const auto spring = BeamAndLink(true, true, [&](SpatialModelBuilder& b) {
    b.AddTorsionalSpring(SpatialTorsionalSpring{"twist", 1, k, c, angle0});
  });
  const SpatialMultibodySystem without(plain), with(spring);
  Eigen::VectorXd q, v;
  RandomState(*spring, &q, &v);
  Eigen::VectorXd F0, F1;
  without.Forces(0.3, q, v, &F0);
  with.Forces(0.3, q, v, &F1);
  const Eigen::VectorXd dF = F1 - F0;
  const int nv = spring->num_v();
  const auto theta = [&](const Eigen::VectorXd& x) { return AngleBetween(*spring, 1, x); };
  Eigen::VectorXd grad(nv);
  for (int i = 0; i < nv; ++i) grad(i) = RateAlong(with, q, Eigen::VectorXd::Unit(nv, i), theta);
  const double theta_dot = grad.dot(v);
  const Eigen::VectorXd expected = -(k * (theta(q) - angle0) + c * theta_dot) * grad;
  const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
  for (int i = 0; i < nv; ++i) {
    EXPECT_NEAR(dF(i), expected(i), 1e-7 * scale) << with.VelocityName(i);
  }
  EXPECT_GT(expected.tail(spring->beam(1)->num_modes()).cwiseAbs().maxCoeff(), 1e-2 * scale);
  // The potential: V(with) − V(without) = ½ k (θ − θ₀)² (the same θ: round-off, 1e-12).
  const double dV = with.PotentialEnergy(0.3, q) - without.PotentialEnergy(0.3, q);
  EXPECT_NEAR(dV, 0.5 * k * std::pow(theta(q) - angle0, 2), 1e-12 * std::max(1.0, dV));
}

TEST(SpatialFlexibleModel, PrismaticFrictionAtANodeOpposesTheSlipOfTheSections) {
  // Friction μ on "guide" (prismatic, the ground on side a, node 1 of the twisting beam at an arm
  // on side b) and on "rail" (node 2 at an arm on side a: the axis z_a turns with the section).
  // After AcceptStep with multipliers λ, each joint's N is the norm of its reaction on b across
  // z_a, and F(with) − F(without) must be
  //   Σ −μ N sign(u) ∂u/∂vᵢ,   u = z_a·(ṗ_b − ṗ_a),
  // with the points' velocities by central differences of their positions along q ⊕ t eᵢ (z_a
  // held at q): bound 1e-7 times the force's scale. Power: (F(with) − F(without))·v = −Σ μ N |u|
  // (the same differences, 1e-7 relative).
  const double mu = 0.4;
  const auto plain = BeamAndLink(true, true, [](SpatialModelBuilder& b) { AddRail(b); });
  const auto rubbing = BeamAndLink(true, true, [&](SpatialModelBuilder& b) {
    const int rail = AddRail(b);
    b.AddPrismaticFriction(SpatialPrismaticFriction{"rub_guide", 6, mu});
    b.AddPrismaticFriction(SpatialPrismaticFriction{"rub_rail", rail, mu});
  });
  const SpatialMultibodySystem without(plain), with(rubbing);
  Eigen::VectorXd q, v;
  RandomState(*rubbing, &q, &v);
  std::vector<int> rows(static_cast<std::size_t>(with.num_joint_rows()));
  for (int r = 0; r < with.num_joint_rows(); ++r) rows[static_cast<std::size_t>(r)] = r;
  const Eigen::VectorXd lambda =
      10.0 * Eigen::VectorXd::LinSpaced(with.num_joint_rows(), -3.0, 5.0).array().sin();
  with.AcceptStep(0.3, q, v, rows, lambda);
  const std::vector<JointReaction> reactions = with.JointReactions(0.3, q, rows, lambda);
  const int nv = rubbing->num_v();
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(nv);
  double power = 0.0;
  for (const auto& [i, joint] : {std::pair{0, 6}, std::pair{1, 7}}) {
    const Eigen::Vector3d z = FrameOf(*rubbing, joint, false, q).axes.col(2);
    const Eigen::Vector3d f_b = reactions[static_cast<std::size_t>(joint)].force_on_b;
    const double N = (f_b - z.dot(f_b) * z).norm();
    EXPECT_NEAR(with.friction_normal_forces()[static_cast<std::size_t>(i)], N, 1e-12 * N);
    EXPECT_GT(N, 1.0);
    const auto slip_rate = [&](const Eigen::VectorXd& u) {
      return RateAlong(with, q, u, [&](const Eigen::VectorXd& x) {
        return z.dot(FrameOf(*rubbing, joint, true, x).p - FrameOf(*rubbing, joint, false, x).p);
      });
    };
    const double u = slip_rate(v);
    ASSERT_GT(std::abs(u), 1e-3);
    for (int k = 0; k < nv; ++k) {
      expected(k) -= mu * N * (u > 0 ? 1.0 : -1.0) * slip_rate(Eigen::VectorXd::Unit(nv, k));
    }
    power -= mu * N * std::abs(u);
  }
  Eigen::VectorXd F0, F1;
  without.Forces(0.3, q, v, &F0);
  with.Forces(0.3, q, v, &F1);
  const Eigen::VectorXd dF = F1 - F0;
  const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
  for (int k = 0; k < nv; ++k) {
    EXPECT_NEAR(dF(k), expected(k), 1e-7 * scale) << with.VelocityName(k);
  }
  EXPECT_GT(expected.tail(rubbing->beam(1)->num_modes()).cwiseAbs().maxCoeff(), 1e-2 * scale);
  EXPECT_NEAR(dF.dot(v), power, 1e-7 * std::abs(power));
}

TEST(SpatialFlexibleModel, JointLimitsAtNodesAreTheSectionsCoordinates) {
  // Limits on "hinge" (revolute, node 3 at an arm on side a), "guide" (prismatic, node 1 on side
  // b) and "rail" (prismatic, node 2 on side a: its axis turns with the section) of the twisting
  // beam. Their g are θ − lower, upper − θ (θ between the section's and the link's axes) and
  // s − lower, upper − s (s = z_a·(p_b − p_a) of the sections' points), computed here: round-off
  // (1e-12). G against central differences of g along q ⊕ h eᵢ (h = 1e-6, bound 1e-7) and γ
  // against second differences along q ⊕ t v (h = 1e-4, bound 1e-5), as the joint rows above.
  const auto model = BeamAndLink(true, true, [](SpatialModelBuilder& b) { AddRail(b); });
  const SpatialMultibodySystem system(model);
  const contact::JointLimits limits(
      model,
      {{"hinge", 1, -1.0, 2.0, 0.5}, {"guide", 6, -0.3, 0.4, -1.0}, {"rail", 7, -0.2, 0.6, 0.0}});
  const int nv = model->num_v();
  const std::vector<int> rows = {0, 1, 2, 3, 4, 5};
  Eigen::VectorXd q, v;
  RandomState(*model, &q, &v);
  const auto g_at = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd g(6);
    limits.Values(0.0, x, rows, g);
    return g;
  };
  const Eigen::VectorXd g = g_at(q);
  const double theta = AngleBetween(*model, 1, q);
  const auto slide = [&](int j) {
    const SideFrame a = FrameOf(*model, j, false, q), b = FrameOf(*model, j, true, q);
    return a.axes.col(2).dot(b.p - a.p);
  };
  Eigen::VectorXd expected(6);
  expected << theta + 1.0, 2.0 - theta, slide(6) + 0.3, 0.4 - slide(6), slide(7) + 0.2,
      0.6 - slide(7);
  EXPECT_LT((g - expected).cwiseAbs().maxCoeff(), 1e-12) << g.transpose();
  Eigen::MatrixXd G(6, nv);
  limits.Jacobian(0.0, q, rows, G);
  for (int i = 0; i < nv; ++i) {
    Eigen::VectorXd qp, qm;
    system.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), 1e-6, &qp);
    system.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), -1e-6, &qm);
    const Eigen::VectorXd fd = (g_at(qp) - g_at(qm)) / 2e-6;
    EXPECT_LT((G.col(i) - fd).cwiseAbs().maxCoeff(), 1e-7) << system.VelocityName(i);
  }
  EXPECT_GT(G.rightCols(model->beam(1)->num_modes()).cwiseAbs().maxCoeff(), 0.1);
  Eigen::VectorXd gamma(6);
  limits.Gamma(0.0, q, v, rows, gamma);
  const double h = 1e-4;
  Eigen::VectorXd qp, qm;
  system.IntegratePosition(q, v, h, &qp);
  system.IntegratePosition(q, v, -h, &qm);
  const Eigen::VectorXd fd = (g_at(qp) - 2.0 * g + g_at(qm)) / (h * h);
  for (int r = 0; r < 6; ++r) {
    EXPECT_NEAR(gamma(r), fd(r), 1e-5 * std::max(1.0, std::abs(fd(r)))) << r;
  }
}

TEST(SpatialFlexibleModel, LoadsAtNodesActAtTheNodeAndOnItsSection) {
  // A constant load at node 2 of the twisting beam: force f = (3, −2, 5) N and torque
  // n = (0.4, −0.7, 0.2) N·m. The force is conservative: its generalized force equals −∂V/∂θᵢ
  // of V = −f·p_node (central differences along q ⊕ h eᵢ, h = 1e-6: bound 1e-7 of the scale,
  // as the joint rows). The torque's is n·Ωᵢ, Ωᵢ the world angular velocity of the node's
  // section along eᵢ, vee(Ṙ_s R_sᵀ) with Ṙ_s by central differences of the section's axes
  // R Λ (computed in the test from SpatialFlexibleBeam::Section): bound 1e-7. Both with modal
  // entries (> 1e-2 of the scale). A load at a node of the rigid link, or with a point, is refused.
  const Eigen::Vector3d f(3.0, -2.0, 5.0), n(0.4, -0.7, 0.2);
  const auto loaded = [&](bool force, bool torque) {
    return BeamAndLink(false, true, [&](SpatialModelBuilder& b) {
      SpatialLoad load;
      load.name = "push";
      load.body = 1;
      load.node = 2;
      if (force) load.force = f;
      if (torque) load.torque = n;
      b.AddLoad(load);
    });
  };
  const auto plain = BeamAndLink(false, true);
  const auto with_force = loaded(true, false), with_torque = loaded(false, true);
  const SpatialMultibodySystem none(plain), pushed(with_force), twisted(with_torque);
  const int nv = plain->num_v(), m = plain->beam(1)->num_modes();
  Eigen::VectorXd q, v;
  RandomState(*plain, &q, &v);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(nv);
  Eigen::VectorXd F0, F_force, F_torque;
  none.Forces(0.0, q, zero, &F0);
  pushed.Forces(0.0, q, zero, &F_force);
  twisted.Forces(0.0, q, zero, &F_torque);
  const SpatialFlexibleBeam& beam = *plain->beam(1);
  const SpatialBeamPoint at = beam.PointAt(beam.NodeX(2));
  const auto section = [&](const Eigen::VectorXd& x) {
    const Eigen::Matrix3d R = QuaternionToRotation(x.segment<4>(plain->QOffset(1) + 3));
    return Eigen::Matrix3d(
        R * beam.Section(at, x.segment(plain->QOffset(1) + 7, m), Eigen::VectorXd()).turn);
  };
  Eigen::VectorXd expected_force(nv), expected_torque(nv);
  for (int i = 0; i < nv; ++i) {
    Eigen::VectorXd qp, qm;
    none.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), 1e-6, &qp);
    none.IntegratePosition(q, Eigen::VectorXd::Unit(nv, i), -1e-6, &qm);
    const double dV = ((pushed.PotentialEnergy(0.0, qp) - none.PotentialEnergy(0.0, qp)) -
                       (pushed.PotentialEnergy(0.0, qm) - none.PotentialEnergy(0.0, qm))) /
                      2e-6;
    expected_force(i) = -dV;
    const Eigen::Matrix3d W = (section(qp) - section(qm)) / 2e-6 * section(q).transpose();
    expected_torque(i) =
        n.dot(Eigen::Vector3d(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1)) / 2.0);
  }
  for (const auto& [dF, expected] : {std::pair{Eigen::VectorXd(F_force - F0), expected_force},
                                     std::pair{Eigen::VectorXd(F_torque - F0), expected_torque}}) {
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    for (int i = 0; i < nv; ++i) {
      EXPECT_NEAR(dF(i), expected(i), 1e-7 * scale) << none.VelocityName(i);
    }
    EXPECT_GT(expected.tail(m).cwiseAbs().maxCoeff(), 1e-2 * scale);
  }
  SpatialModelBuilder builder;
  SpatialBody rigid;
  rigid.name = "rigid";
  builder.AddBody(rigid);
  SpatialLoad bad;
  bad.name = "bad";
  bad.body = 0;
  bad.node = 1;
  EXPECT_THROW(builder.AddLoad(bad), std::invalid_argument);
}

TEST(SpatialFlexibleModel, SpringDampersAtNodesPullAlongTheLineBetweenTheirEnds) {
  // A spring-damper between the link's point (0.2, 0.1, −0.3) and node 2 of the twisting beam at
  // the arm (0.01, 0.08, −0.05) (the node on side b, then on side a) and between the ground point
  // (0.5, −0.4, 1.0) and node 3 at the arm (−0.02, −0.06, 0.09). The spring (k, L₀ = 0.3 m, no
  // damping) is conservative: its generalized force is −∂V/∂θᵢ, V(with) − V(without) by central
  // differences along q ⊕ h eᵢ (h = 1e-6: bound 1e-7 of the scale, as the loads at nodes above),
  // with modal entries > 1e-2 of the scale. The damper alone has the power F·v = −c ℓ̇², ℓ from
  // a probe spring (k = 1, L₀ = 0: V(probe) − V(without) = ½ ℓ²) and ℓ̇ by central differences
  // along q ⊕ ±h v (h = 1e-6, the same bound relative to c ℓ̇²).
  const double k = 40.0, c = 0.9;
  for (int layout = 0; layout < 3; ++layout) {
    const auto spring_model = [&](double stiffness, double damping, double rest) {
      return BeamAndLink(false, true, [&](SpatialModelBuilder& b) {
        SpatialSpringDamper s;
        s.name = "spring";
        s.stiffness = stiffness;
        s.damping = damping;
        s.rest_length = rest;
        s.body_a = 0;
        s.body_b = 1;
        s.point_a = Eigen::Vector3d(0.2, 0.1, -0.3);
        s.node_b = 2;
        s.arm_b = Eigen::Vector3d(0.01, 0.08, -0.05);
        if (layout == 1) {
          std::swap(s.body_a, s.body_b);
          std::swap(s.point_a, s.point_b);
          std::swap(s.node_a, s.node_b);
          std::swap(s.arm_a, s.arm_b);
        }
        if (layout == 2) {
          s.body_a = kGround;
          s.point_a = Eigen::Vector3d(0.5, -0.4, 1.0);
          s.node_b = 3;
          s.arm_b = Eigen::Vector3d(-0.02, -0.06, 0.09);
        }
        b.AddSpringDamper(s);
      });
    };
    const SpatialMultibodySystem none(BeamAndLink(false, true)), spring(spring_model(k, 0.0, 0.3)),
        damper(spring_model(0.0, c, 0.3)), probe(spring_model(1.0, 0.0, 0.0));
    const int nv = none.nv(), m = none.model().beam(1)->num_modes();
    Eigen::VectorXd q, v;
    RandomState(none.model(), &q, &v);
    Eigen::VectorXd F0, F_spring, F_damper;
    none.Forces(0.0, q, v, &F0);
    spring.Forces(0.0, q, v, &F_spring);
    damper.Forces(0.0, q, v, &F_damper);
    const auto extra_energy = [&](const SpatialMultibodySystem& with, const Eigen::VectorXd& x) {
      return with.PotentialEnergy(0.0, x) - none.PotentialEnergy(0.0, x);
    };
    Eigen::VectorXd expected(nv);
    for (int i = 0; i < nv; ++i) {
      expected(i) = -RateAlong(none, q, Eigen::VectorXd::Unit(nv, i),
                               [&](const Eigen::VectorXd& x) { return extra_energy(spring, x); });
    }
    const Eigen::VectorXd dF = F_spring - F0;
    const double scale = std::max(1.0, expected.cwiseAbs().maxCoeff());
    for (int i = 0; i < nv; ++i) {
      EXPECT_NEAR(dF(i), expected(i), 1e-7 * scale) << none.VelocityName(i) << " layout " << layout;
    }
    EXPECT_GT(expected.tail(m).cwiseAbs().maxCoeff(), 1e-2 * scale) << "layout " << layout;
    const auto length = [&](const Eigen::VectorXd& x) {
      return std::sqrt(2.0 * extra_energy(probe, x));
    };
    const double rate = RateAlong(none, q, v, length);
    EXPECT_GT(std::abs(rate), 1e-2) << "layout " << layout;
    EXPECT_NEAR((F_damper - F0).dot(v), -c * rate * rate, 1e-7 * std::max(1.0, c * rate * rate))
        << "layout " << layout;
  }
  // A node on the rigid link, a node out of range, a node with a point, an arm without a node.
  for (int bad = 0; bad < 4; ++bad) {
    EXPECT_THROW(BeamAndLink(false, true,
                             [&](SpatialModelBuilder& b) {
                               SpatialSpringDamper s;
                               s.name = "bad";
                               s.body_a = 0;
                               s.body_b = 1;
                               s.stiffness = 1.0;
                               if (bad == 0) s.node_a = 1;
                               if (bad == 1) s.node_b = 9;
                               if (bad == 2) {
                                 s.node_b = 2;
                                 s.point_b = Eigen::Vector3d(0.1, 0.0, 0.0);
                               }
                               if (bad == 3) s.arm_b = Eigen::Vector3d(0.0, 0.1, 0.0);
                               b.AddSpringDamper(s);
                             }),
                 std::invalid_argument)
        << "case " << bad;
  }
}

TEST(SpatialFlexibleModel, BeamPinnedAtOneEndSwingsAsTheCompoundPendulum) {
  // The Kane beam (ρA = 1.2 kg/m, EI = 14 000 N m²) 1 m long, clamped reference, 4 elements and
  // 2 modes (the first bending mode of each plane; the axial one, 7 600 rad/s, would set DOPRI5's
  // step), hanging from a spherical joint at node 0 under g = 9.81 m/s², released from 0.02 rad
  // about y. Rigid, it is the compound pendulum ω₀² = (m g L/2)/(m L²/3 + ρ I_xz L) (the
  // sections' J_sec about y adds ρ I_xz L). Its first bending frequency is 3.516 √(EI/ρA)/L² =
  // 380 rad/s against ω₀ = 3.8 rad/s, so the elastic correction to ω₀ is of order (ω₀/ω₁)² = 1e-4.
  // Its sign: the rigid pendulum is the flexible one constrained to η = 0, so by Rayleigh's
  // principle the flexible beam's lowest frequency of the linearised swing is at most ω₀. The
  // finite amplitude lowers it by θ₀²/16 = 2.5e-5 (the period's series T₀(1 + θ₀²/16 + ...)).
  // The period is taken from upward crossings of the frame's swing angle θ = 2 atan2(q_y, q_w) −
  // π/2 sampled every 1 ms: the frame's ω_y also carries the elastic vibration (~1.5e3 rad/s),
  // which shifted the crossings of ω_y sampled every 10 ms by ~5e-4 s and gave +9.4e-5 instead.
  // Measured: −2.537e-5 here, −2.501e-5 with E × 100 (the rigid limit): the flexible beam is
  // slower by 3.6e-7; the measurement's error, from the stiff beam, is ~1e-8.
  BeamProperties p = testing::KaneBeam(4, 2, BeamReference::kClamped, 1.0);
  const double I_xz = 3e-7, g = 9.81;
  SpatialBody body;
  body.name = "beam";
  body.beam = p;
  body.second_moment_xz = I_xz;
  const double theta0 = 0.02;
  // Hanging: x along −z is R_y(π/2); released at θ₀ further about y.
  const double angle = std::numbers::pi / 2 + theta0;
  body.quaternion = Eigen::Vector4d(std::cos(angle / 2), 0.0, std::sin(angle / 2), 0.0);
  SpatialModelBuilder builder;
  builder.AddBody(body);
  SpatialJoint pin;
  pin.name = "pin";
  pin.type = SpatialJointType::kSpherical;
  pin.body_a = kGround;
  pin.body_b = 0;
  pin.node_b = 0;
  builder.AddJoint(pin);
  builder.SetGravity(Eigen::Vector3d(0.0, 0.0, -g));
  const auto model = builder.Build();
  auto system = std::make_shared<SpatialMultibodySystem>(model);
  const double m = p.density * p.area * p.length, L = p.length;
  const double omega0 = std::sqrt(m * g * L / 2 / (m * L * L / 3 + p.density * I_xz * L));
  events::SimulationOptions options;
  options.integrator = "dopri5";
  options.integrator_options.rtol = 1e-8;
  options.integrator_options.atol = 1e-8;
  events::Simulation sim(system, options);
  sim.SetState(0.0, model->InitialPositions(), model->InitialVelocities());
  const double e0 = system->KineticEnergy(sim.q(), sim.v()) + system->PotentialEnergy(0.0, sim.q());
  // Upward zero crossings of the swing angle about y (a planar swing), linearly interpolated; a
  // crossing is counted again only after θ has gone below −θ₀/2.
  const auto swing_angle = [&] {
    return 2.0 * std::atan2(sim.q()(5), sim.q()(3)) - std::numbers::pi / 2;
  };
  std::vector<double> crossings;
  double previous = swing_angle(), drift = 0.0, t_end = 4.0 * 2.0 * std::numbers::pi / omega0;
  bool armed = false;
  const double dt = 1e-3;
  for (int k = 1; k * dt <= t_end; ++k) {
    ASSERT_EQ(sim.AdvanceTo(k * dt).status, events::RunStatus::kFinished);
    const double theta = swing_angle();
    if (armed && previous < 0.0 && theta >= 0.0) {
      crossings.push_back(k * dt - dt * theta / (theta - previous));
      armed = false;
    }
    if (theta < -theta0 / 2) armed = true;
    previous = theta;
    const double e =
        system->KineticEnergy(sim.q(), sim.v()) + system->PotentialEnergy(0.0, sim.q());
    drift = std::max(drift, std::abs(e - e0));
  }
  ASSERT_GE(crossings.size(), 3u);
  const double period = (crossings.back() - crossings.front()) / double(crossings.size() - 1);
  const double omega = 2.0 * std::numbers::pi / period;
  // Energy scale: the swing's m g (L/2) (1 − cos θ₀).
  const double swing = m * g * L / 2 * (1.0 - std::cos(theta0));
  std::cout << "pinned spatial beam: omega " << omega << " rad/s, compound pendulum " << omega0
            << " (relative " << omega / omega0 - 1.0 << "); |E - E0| max " << drift
            << " J = " << drift / swing << " of the swing energy; "
            << sim.stats().integrator.accepted_steps << " steps\n";
  // Slower than the rigid pendulum at this amplitude, by less than 5e-6 (the (ω₀/ω₁)² scale).
  const double rigid = omega0 * (1.0 - theta0 * theta0 / 16.0);
  EXPECT_LT(omega, rigid);
  EXPECT_GT(omega, rigid * (1.0 - 5e-6));
  EXPECT_LT(drift / swing, 1e-4);
}

}  // namespace
}  // namespace saltus::engine
