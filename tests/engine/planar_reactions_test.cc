// Planar joint reactions (PlanarMultibodySystem::JointReactions, engine/planar_model.h) from the
// index-1 multipliers, against Newton–Euler: a swinging bar on a revolute joint (closed form), a
// crank driven at a constant rate by an angle_driver joint and by a driver on its revolute joint
// (closed form), a slider-crank whose reactions, summed per body, must give m a and J θ̈, a
// slider under a displacement driver (closed form), and the distance, fixed and point_on_line
// joints (Newton–Euler per body, no code of their own in the reduction).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine/constrained_dynamics.h"
#include "engine/planar_model.h"

namespace saltus::engine {
namespace {

constexpr double kG = 9.81;

double Cross(const Eigen::Vector2d& a, const Eigen::Vector2d& b) {
  return a.x() * b.y() - a.y() * b.x();
}

std::vector<int> AllRows(const MechanicalSystem& system) {
  std::vector<int> rows(static_cast<std::size_t>(system.num_constraints()));
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

PlanarBody Bar(const std::string& name, double m, double length, const Eigen::Vector3d& q0) {
  PlanarBody b;
  b.name = name;
  b.mass = m;
  b.inertia = m * length * length / 12.0;
  b.q0 = q0;
  return b;
}

// A bar (mass m, length L, centre of mass at its middle) hinged at its end to the ground origin:
// body point s = (−L/2, 0), so r = (L/2) e, e = (cos θ, sin θ). About the pivot
// (J + m L²/4) θ̈ = −m g (L/2) cos θ, and Newton gives the pin force on the bar
// f = m a − m g_vec, a = (L/2)(θ̈ perp(e) − θ̇² e); its torque about the pin point is zero.
TEST(PlanarReactionsTest, SwingingBarMatchesNewtonEuler) {
  const double m = 2.5, L = 0.9, theta = 0.4, omega = -1.7;
  PlanarModelBuilder builder;
  const int bar = builder.AddBody(Bar("bar", m, L, Eigen::Vector3d::Zero()));
  PlanarJoint pin;
  pin.name = "pin";
  pin.body_a = kGround;
  pin.body_b = bar;
  pin.point_b = {-L / 2, 0.0};
  builder.AddJoint(pin);
  builder.SetGravity({0.0, -kG});
  const PlanarMultibodySystem sys(builder.Build());
  const Eigen::Vector2d e(std::cos(theta), std::sin(theta)), perp_e(-e.y(), e.x());
  Eigen::VectorXd q(3), v(3);
  q << 0.5 * L * e, theta;
  v << 0.5 * L * omega * perp_e, omega;
  ConstrainedDynamics dynamics(sys);
  Eigen::VectorXd vdot, lambda;
  const std::vector<int> rows = AllRows(sys);
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  const std::vector<PlanarJointReaction> r = sys.JointReactions(0.0, q, rows, lambda);
  ASSERT_EQ(r.size(), 1u);
  const double J_pivot = m * L * L / 12.0 + m * L * L / 4.0;
  const double theta_ddot = -m * kG * 0.5 * L * std::cos(theta) / J_pivot;
  const Eigen::Vector2d a = 0.5 * L * (theta_ddot * perp_e - omega * omega * e);
  const Eigen::Vector2d f_expected = m * a - m * Eigen::Vector2d(0.0, -kG);
  // One index-1 solve of a 3 × 3 system with entries of size ~25: round-off ~1e-14.
  EXPECT_LT((r[0].force_on_b - f_expected).norm(), 1e-12)
      << r[0].force_on_b.transpose() << " vs " << f_expected.transpose();
  EXPECT_NEAR(r[0].torque_on_b, 0.0, 1e-12);
  EXPECT_GT(f_expected.norm(), 5.0);  // not vacuous (m g ≈ 25 N, partly balanced)
  // The ground side is zero.
  EXPECT_TRUE(r[0].force_on_a.isZero(0.0));
  EXPECT_NEAR(r[0].torque_on_a, 0.0, 0.0);
}

// The same bar driven at θ = ω t: θ̈ = 0, so the pin force is m (−(L/2) ω² e) + m g ŷ and the
// driving torque about the pin balances gravity, m g (L/2) cos θ; the revolute joint carries no
// torque. Driven (a) by an angle_driver joint (the reaction of that joint is the torque) and
// (b) by a driver on the revolute joint (included in the joint's reaction).
TEST(PlanarReactionsTest, DrivenCrankMatchesNewtonEuler) {
  const double m = 3.0, L = 0.8, omega = 2.0;
  for (const bool driver_on_joint : {false, true}) {
    SCOPED_TRACE(driver_on_joint ? "PlanarDriver on the revolute" : "angle_driver joint");
    PlanarModelBuilder builder;
    const int bar = builder.AddBody(Bar("bar", m, L, Eigen::Vector3d::Zero()));
    PlanarJoint pin;
    pin.name = "pin";
    pin.body_a = kGround;
    pin.body_b = bar;
    pin.point_b = {-L / 2, 0.0};
    const int hinge = builder.AddJoint(pin);
    if (driver_on_joint) {
      PlanarDriver motor;
      motor.name = "motor";
      motor.joint = hinge;
      motor.kind = DriverKind::kAngle;
      motor.profile.kind = TimeProfile::Kind::kConstantRate;
      motor.profile.rate = omega;
      builder.AddDriver(motor);
    } else {
      PlanarJoint motor;
      motor.name = "motor";
      motor.type = PlanarJointType::kAngleDriver;
      motor.body_a = kGround;
      motor.body_b = bar;
      motor.rate = omega;
      builder.AddJoint(motor);
    }
    builder.SetGravity({0.0, -kG});
    const PlanarMultibodySystem sys(builder.Build());
    ConstrainedDynamics dynamics(sys);
    const std::vector<int> rows = AllRows(sys);
    ASSERT_EQ(rows.size(), 3u);
    double worst = 0.0;
    for (const double t : {0.0, 0.3, 1.1, 2.4}) {
      const double theta = omega * t;
      const Eigen::Vector2d e(std::cos(theta), std::sin(theta)), perp_e(-e.y(), e.x());
      Eigen::VectorXd q(3), v(3), vdot, lambda;
      q << 0.5 * L * e, theta;
      v << 0.5 * L * omega * perp_e, omega;
      ASSERT_TRUE(dynamics.Solve(t, q, v, rows, &vdot, &lambda).ok);
      const std::vector<PlanarJointReaction> r = sys.JointReactions(t, q, rows, lambda);
      const Eigen::Vector2d f_expected =
          -m * 0.5 * L * omega * omega * e + Eigen::Vector2d(0, m * kG);
      const double torque_expected = m * kG * 0.5 * L * std::cos(theta);
      worst = std::max(worst, (r[0].force_on_b - f_expected).norm());
      if (driver_on_joint) {
        ASSERT_EQ(r.size(), 1u);
        worst = std::max(worst, std::abs(r[0].torque_on_b - torque_expected));
        // The driver's multiplier is its effort: the torque on body_b.
        worst = std::max(worst, std::abs(lambda(sys.model().DriverRow(0)) - torque_expected));
      } else {
        ASSERT_EQ(r.size(), 2u);
        worst = std::max(worst, std::abs(r[0].torque_on_b));
        worst = std::max(worst, r[1].force_on_b.norm());
        worst = std::max(worst, std::abs(r[1].torque_on_b - torque_expected));
      }
    }
    // Forces ~30 N from one index-1 solve: round-off ~1e-14.
    EXPECT_LT(worst, 1e-12);
  }
}

// Slider-crank (crank 0.1 m pinned to the ground, rod 0.3 m, slider on a prismatic joint along
// the ground x axis written with the slider as body_a) at a consistent state: for every body the
// reactions of its joints, moved back to the centre of mass (τ_c = τ_p + s_w × f), plus the
// applied forces must give Newton–Euler, m a = m g + Σ f, J θ̈ = Σ τ_c, with a, θ̈ from the same
// index-1 solve. This checks the reduction to each joint point for revolute and prismatic rows
// with either side as body_b.
TEST(PlanarReactionsTest, SliderCrankReactionsSumToNewtonEulerPerBody) {
  const double r_crank = 0.1, l_rod = 0.3, phi = 0.7, phi_dot = 5.0;
  PlanarModelBuilder builder;
  const Eigen::Vector2d tip = r_crank * Eigen::Vector2d(std::cos(phi), std::sin(phi));
  const double x_s = tip.x() + std::sqrt(l_rod * l_rod - tip.y() * tip.y());
  const double beta = std::atan2(-tip.y(), x_s - tip.x());
  const Eigen::Vector2d u(std::cos(beta), std::sin(beta));
  const int crank =
      builder.AddBody(Bar("crank", 0.5, r_crank, {0.5 * tip.x(), 0.5 * tip.y(), phi}));
  const Eigen::Vector2d rod_c = tip + 0.5 * l_rod * u;
  const int rod = builder.AddBody(Bar("rod", 1.2, l_rod, {rod_c.x(), rod_c.y(), beta}));
  PlanarBody slider_body = Bar("slider", 0.8, 0.05, {x_s, 0.0, 0.0});
  const int slider = builder.AddBody(slider_body);
  const auto revolute = [&](const char* name, int a, int b, Eigen::Vector2d pa,
                            Eigen::Vector2d pb) {
    PlanarJoint j;
    j.name = name;
    j.body_a = a;
    j.body_b = b;
    j.point_a = pa;
    j.point_b = pb;
    builder.AddJoint(j);
  };
  revolute("main", kGround, crank, {0, 0}, {-0.5 * r_crank, 0});
  revolute("crankpin", crank, rod, {0.5 * r_crank, 0}, {-0.5 * l_rod, 0});
  revolute("wristpin", rod, slider, {0.5 * l_rod, 0}, {0, 0});
  PlanarJoint guide;
  guide.name = "guide";
  guide.type = PlanarJointType::kPrismatic;
  guide.body_a = slider;
  guide.body_b = kGround;
  guide.axis_a = {1, 0};
  guide.point_a = {0.02, 0.01};
  builder.AddJoint(guide);
  builder.SetGravity({0.3, -kG});
  const auto model = builder.Build();
  const PlanarMultibodySystem sys(model);
  Eigen::VectorXd q = model->InitialPositions(), v(9), vdot, lambda;
  // Velocities compatible with the joints: the crank turns at φ̇, the rest follows from G v = 0
  // (least-squares completion of the crank's velocity).
  const std::vector<int> rows = AllRows(sys);
  Eigen::MatrixXd G;
  sys.ConstraintJacobian(0.0, q, rows, &G);
  Eigen::VectorXd v_crank = Eigen::VectorXd::Zero(9);
  v_crank.segment<3>(0) << -0.5 * tip.y() * phi_dot, 0.5 * tip.x() * phi_dot, phi_dot;
  const Eigen::MatrixXd G_rest = G.rightCols(6);
  v = v_crank;
  v.tail(6) = G_rest.completeOrthogonalDecomposition().solve(-G.leftCols(3) * v_crank.head(3));
  ASSERT_LT((G * v).norm(), 1e-12);
  ConstrainedDynamics dynamics(sys);
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  const std::vector<PlanarJointReaction> r = sys.JointReactions(0.0, q, rows, lambda);
  ASSERT_EQ(r.size(), 4u);
  double worst = 0.0, scale = 0.0;
  for (int i = 0; i < 3; ++i) {
    const PlanarBody& body = model->bodies()[static_cast<std::size_t>(i)];
    Eigen::Vector2d force = body.mass * model->gravity();
    double torque = 0.0;
    for (std::size_t j = 0; j < r.size(); ++j) {
      const PlanarJoint& joint = model->joints()[j];
      for (const bool side_b : {false, true}) {
        if ((side_b ? joint.body_b : joint.body_a) != i) continue;
        const Eigen::Vector2d f = side_b ? r[j].force_on_b : r[j].force_on_a;
        const double tau_p = side_b ? r[j].torque_on_b : r[j].torque_on_a;
        const Eigen::Vector2d s_w =
            Eigen::Rotation2Dd(q(3 * i + 2)) * (side_b ? joint.point_b : joint.point_a);
        force += f;
        torque += tau_p + Cross(s_w, f);
        scale = std::max(scale, f.norm());
      }
    }
    worst = std::max(worst, (body.mass * vdot.segment<2>(3 * i) - force).norm());
    worst = std::max(worst, std::abs(body.inertia * vdot(3 * i + 2) - torque));
  }
  std::printf("slider-crank Newton-Euler residual %.2e (largest reaction %.1f N)\n", worst, scale);
  // Sums of reactions of ~10 N (measured residual ~2e-15): round-off of the solve and the sums.
  EXPECT_LT(worst, 1e-11) << "largest reaction " << scale;
  EXPECT_GT(scale, 5.0);  // not vacuous
  // A revolute joint transmits no torque about its pin; a prismatic one does.
  for (const int j : {0, 1, 2}) EXPECT_NEAR(r[static_cast<std::size_t>(j)].torque_on_b, 0.0, 1e-11);
  EXPECT_GT(std::abs(r[3].torque_on_a), 1e-3);
  // The ground side of the guide is zero, its slider side is not.
  EXPECT_TRUE(r[3].force_on_b.isZero(0.0));
  EXPECT_GT(r[3].force_on_a.norm(), 1.0);
}

// A slider on a prismatic joint with the ground along u = (cos α, sin α), driven by a
// displacement driver s(t) = s₀ + A sin(w t): Newton along and across the axis gives the joint
// force on the slider m s̈ u − m g_vec (driver included), the driver's effort m s̈ − m g·u, and no
// torque about the slider's centre (gravity acts there).
TEST(PlanarReactionsTest, DisplacementDriverEffortMatchesNewton) {
  const double m = 1.5, alpha = 0.6, s0 = 0.2, amplitude = 0.1, w = 5.0;
  const Eigen::Vector2d u(std::cos(alpha), std::sin(alpha)), gravity(0.0, -kG);
  PlanarModelBuilder builder;
  PlanarBody body;
  body.name = "slider";
  body.mass = m;
  body.inertia = 0.02;
  body.q0 << s0 * u, 0.0;
  const int slider = builder.AddBody(body);
  PlanarJoint guide;
  guide.name = "guide";
  guide.type = PlanarJointType::kPrismatic;
  guide.body_a = kGround;
  guide.body_b = slider;
  guide.axis_a = u;
  const int j = builder.AddJoint(guide);
  PlanarDriver push;
  push.name = "push";
  push.joint = j;
  push.kind = DriverKind::kDisplacement;
  push.profile.kind = TimeProfile::Kind::kSine;
  push.profile.value0 = s0;
  push.profile.amplitude = amplitude;
  push.profile.frequency = w;
  builder.AddDriver(push);
  builder.SetGravity(gravity);
  const PlanarMultibodySystem sys(builder.Build());
  ConstrainedDynamics dynamics(sys);
  const std::vector<int> rows = AllRows(sys);
  ASSERT_EQ(rows.size(), 3u);
  double worst = 0.0;
  for (const double t : {0.0, 0.25, 0.9}) {
    const double s = s0 + amplitude * std::sin(w * t);
    const double s_dot = amplitude * w * std::cos(w * t);
    const double s_ddot = -amplitude * w * w * std::sin(w * t);
    Eigen::VectorXd q(3), v(3), vdot, lambda;
    q << s * u, 0.0;
    v << s_dot * u, 0.0;
    ASSERT_TRUE(dynamics.Solve(t, q, v, rows, &vdot, &lambda).ok);
    const std::vector<PlanarJointReaction> r = sys.JointReactions(t, q, rows, lambda);
    ASSERT_EQ(r.size(), 1u);
    worst = std::max(worst, (r[0].force_on_b - (m * s_ddot * u - m * gravity)).norm());
    worst = std::max(worst, std::abs(r[0].torque_on_b));
    worst = std::max(
        worst, std::abs(lambda(sys.model().DriverRow(0)) - (m * s_ddot - m * gravity.dot(u))));
  }
  // Forces ~15 N from one index-1 solve: round-off ~1e-14.
  EXPECT_LT(worst, 1e-12);
}

// The reduction is generic over a joint's rows: the distance, fixed and point_on_line joints get
// their reactions without code of their own. A bar hanging from the ground on a distance joint
// (massless rod), a plate welded to it, a bead in a slot of the plate, at a consistent state with
// velocities in the null space of G: per body, the reactions give Newton–Euler as above; the rod
// pulls along itself and the slot pushes across itself, neither with a torque about its point.
TEST(PlanarReactionsTest, NewJointTypesNeedNoCodeOfTheirOwn) {
  PlanarModelBuilder builder;
  const double theta_bar = 0.2, weld_angle = 0.4;
  const Eigen::Vector2d bar_r(0.5, -0.6), weld_on_bar(0.3, 0.1), slot_at(0.2, 0.0);
  const int bar = builder.AddBody(Bar("bar", 1.1, 0.8, {bar_r.x(), bar_r.y(), theta_bar}));
  const Eigen::Vector2d plate_r = bar_r + Eigen::Rotation2Dd(theta_bar) * weld_on_bar;
  const double theta_plate = theta_bar + weld_angle;
  const int plate =
      builder.AddBody(Bar("plate", 0.6, 0.4, {plate_r.x(), plate_r.y(), theta_plate}));
  const Eigen::Vector2d bead_r = plate_r + Eigen::Rotation2Dd(theta_plate) * slot_at;
  const int bead = builder.AddBody(Bar("bead", 0.2, 0.05, {bead_r.x(), bead_r.y(), -0.3}));
  PlanarJoint rod;
  rod.name = "rod";
  rod.type = PlanarJointType::kDistance;
  rod.body_a = kGround;
  rod.body_b = bar;
  rod.point_b = {-0.3, 0.0};  // length 0: the initial distance
  builder.AddJoint(rod);
  PlanarJoint weld;
  weld.name = "weld";
  weld.type = PlanarJointType::kFixed;
  weld.body_a = bar;
  weld.body_b = plate;
  weld.point_a = weld_on_bar;
  weld.angle0 = weld_angle;
  builder.AddJoint(weld);
  PlanarJoint slot;
  slot.name = "slot";
  slot.type = PlanarJointType::kPointOnLine;
  slot.body_a = plate;
  slot.body_b = bead;
  slot.axis_a = {1.0, 0.0};
  builder.AddJoint(slot);
  builder.SetGravity({0.0, -kG});
  const auto model = builder.Build();
  const PlanarMultibodySystem sys(model);
  const std::vector<int> rows = AllRows(sys);
  ASSERT_EQ(rows.size(), 5u);  // 1 + 3 + 1
  const Eigen::VectorXd q = model->InitialPositions();
  Eigen::MatrixXd G;
  sys.ConstraintJacobian(0.0, q, rows, &G);
  Eigen::VectorXd g;
  sys.ConstraintValues(0.0, q, rows, &g);
  ASSERT_LT(g.norm(), 1e-14);  // consistent positions
  Eigen::VectorXd v(9);
  v << 0.3, -1.1, 0.9, -0.4, 0.7, 1.3, 0.2, -0.5, 2.0;
  v -= G.completeOrthogonalDecomposition().solve(G * v);  // onto G v = 0
  ASSERT_LT((G * v).norm(), 1e-12);
  ConstrainedDynamics dynamics(sys);
  Eigen::VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  const std::vector<PlanarJointReaction> r = sys.JointReactions(0.0, q, rows, lambda);
  ASSERT_EQ(r.size(), 3u);
  double worst = 0.0;
  for (int i = 0; i < 3; ++i) {
    const PlanarBody& body = model->bodies()[static_cast<std::size_t>(i)];
    Eigen::Vector2d force = body.mass * model->gravity();
    double torque = 0.0;
    for (std::size_t j = 0; j < r.size(); ++j) {
      const PlanarJoint& joint = model->joints()[j];
      for (const bool side_b : {false, true}) {
        if ((side_b ? joint.body_b : joint.body_a) != i) continue;
        const Eigen::Vector2d f = side_b ? r[j].force_on_b : r[j].force_on_a;
        const Eigen::Vector2d s_w =
            Eigen::Rotation2Dd(q(3 * i + 2)) * (side_b ? joint.point_b : joint.point_a);
        force += f;
        torque += (side_b ? r[j].torque_on_b : r[j].torque_on_a) + Cross(s_w, f);
      }
    }
    worst = std::max(worst, (body.mass * vdot.segment<2>(3 * i) - force).norm());
    worst = std::max(worst, std::abs(body.inertia * vdot(3 * i + 2) - torque));
  }
  // The rod's force on the bar is along d = p_bar − p_ground; the slot's force on the bead is
  // along the slot's normal; neither has a torque about its joint point. The weld carries both.
  const Eigen::Vector2d d = q.segment<2>(0) + Eigen::Rotation2Dd(q(2)) * rod.point_b;
  const Eigen::Vector2d u_slot = Eigen::Rotation2Dd(q(5)) * slot.axis_a;
  worst =
      std::max({worst, std::abs(Cross(d.normalized(), r[0].force_on_b)), std::abs(r[0].torque_on_b),
                std::abs(u_slot.dot(r[2].force_on_b)), std::abs(r[2].torque_on_b)});
  std::printf(
      "distance/fixed/point_on_line reactions: residual %.2e (rod %.1f N, weld %.1f N "
      "and %.2f N m, slot %.2f N)\n",
      worst, r[0].force_on_b.norm(), r[1].force_on_b.norm(), r[1].torque_on_b,
      r[2].force_on_b.norm());
  // Forces of ~5 N from one index-1 solve: round-off ~1e-15 (measured 2e-15).
  EXPECT_LT(worst, 1e-11);
  EXPECT_GT(r[0].force_on_b.norm(), 1.0);       // not vacuous (measured 4.7 N)
  EXPECT_GT(std::abs(r[1].torque_on_b), 1e-2);  // the weld holds a torque
  EXPECT_GT(r[2].force_on_b.norm(), 1e-2);      // the slot pushes
}

TEST(PlanarReactionsTest, LambdaOfTheWrongSizeThrows) {
  PlanarModelBuilder builder;
  PlanarBody b;
  b.name = "b";
  builder.AddBody(b);
  const PlanarMultibodySystem sys(builder.Build());
  const std::vector<int> rows = {0, 1};
  EXPECT_THROW(sys.JointReactions(0.0, Eigen::VectorXd::Zero(3), rows, Eigen::VectorXd::Zero(3)),
               std::invalid_argument);
}

}  // namespace
}  // namespace saltus::engine
