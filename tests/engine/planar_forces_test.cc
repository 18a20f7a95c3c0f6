// Planar force elements (engine/planar_model.h): the torsional spring-damper on a revolute joint
// and loads scaled by a TimeProfile. Forces against their closed forms, the conservative part
// against the potential energy (F = −∂V/∂q by central differences), and the builder's errors.
// (K and C against finite differences: force_jacobians_test.cc.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>

#include "engine/planar_model.h"

namespace saltus::engine {
namespace {

PlanarBody Body(const std::string& name, double mass, double inertia) {
  PlanarBody b;
  b.name = name;
  b.mass = mass;
  b.inertia = inertia;
  return b;
}

PlanarJoint Revolute(const std::string& name, int a, int b, Eigen::Vector2d point_a,
                     Eigen::Vector2d point_b) {
  PlanarJoint j;
  j.name = name;
  j.body_a = a;
  j.body_b = b;
  j.point_a = point_a;
  j.point_b = point_b;
  return j;
}

PlanarTorsionalSpring Torsional(const std::string& name, int joint, double k, double c,
                                double angle0) {
  PlanarTorsionalSpring s;
  s.name = name;
  s.joint = joint;
  s.stiffness = k;
  s.damping = c;
  s.angle0 = angle0;
  return s;
}

TimeProfile Sine(double value0, double amplitude, double frequency) {
  TimeProfile p;
  p.kind = TimeProfile::Kind::kSine;
  p.value0 = value0;
  p.amplitude = amplitude;
  p.frequency = frequency;
  return p;
}

// Two bodies, a ground pin and an elbow, each with a torsional spring-damper, plus a spring with
// rest length, one without, a constant load (force and torque), a scaled load and gravity.
struct Fixture {
  std::shared_ptr<const PlanarModel> model;
  std::shared_ptr<const PlanarMultibodySystem> system;
};
Fixture MakeSystem(bool with_scaled_load) {
  PlanarModelBuilder builder;
  const int a = builder.AddBody(Body("a", 1.2, 0.1));
  const int b = builder.AddBody(Body("b", 0.7, 0.04));
  const int pin = builder.AddJoint(Revolute("pin", kGround, a, {0.1, 0.2}, {-0.3, 0.0}));
  const int elbow = builder.AddJoint(Revolute("elbow", a, b, {0.3, 0.0}, {-0.2, 0.1}));
  builder.AddTorsionalSpring(Torsional("t_pin", pin, 8.0, 0.5, 0.3));
  builder.AddTorsionalSpring(Torsional("t_elbow", elbow, 20.0, 1.5, -0.6));
  PlanarSpringDamper s1;
  s1.name = "s1";
  s1.body_a = kGround;
  s1.body_b = b;
  s1.point_a = {1.0, 1.0};
  s1.point_b = {0.2, 0.0};
  s1.stiffness = 15.0;
  s1.damping = 0.3;
  s1.rest_length = 0.5;
  builder.AddSpringDamper(s1);
  PlanarSpringDamper s2 = s1;
  s2.name = "s2";
  s2.body_a = a;
  s2.point_a = {0.0, 0.1};
  s2.rest_length = 0.0;
  builder.AddSpringDamper(s2);
  PlanarLoad load;
  load.name = "push";
  load.body = a;
  load.force = {1.5, -0.5};
  load.point = {0.2, 0.1};
  load.torque = 0.4;
  builder.AddLoad(load);
  if (with_scaled_load) {
    PlanarLoad pulse;
    pulse.name = "pulse";
    pulse.body = b;
    pulse.force = {-2.0, 3.0};
    pulse.point = {0.1, -0.2};
    pulse.torque = -0.8;
    pulse.scale = Sine(0.5, 2.0, 3.0);
    builder.AddLoad(pulse);
  }
  builder.SetGravity({0.0, -9.81});
  Fixture f;
  f.model = builder.Build();
  f.system = std::make_shared<const PlanarMultibodySystem>(f.model);
  return f;
}

TEST(PlanarForcesTest, TorsionalSpringTorqueIsTheClosedForm) {
  // One body pinned at its centre to the ground, a torsional spring-damper, no gravity: the only
  // force is the torque −k (θ − θ₀) − c θ̇ on θ; with the ground as body_b it is the opposite.
  for (const bool ground_is_b : {false, true}) {
    PlanarModelBuilder builder;
    const int disk = builder.AddBody(Body("disk", 2.0, 0.3));
    const int pin = builder.AddJoint(ground_is_b ? Revolute("pin", disk, kGround, {0, 0}, {0, 0})
                                                 : Revolute("pin", kGround, disk, {0, 0}, {0, 0}));
    builder.AddTorsionalSpring(Torsional("coil", pin, 5.0, 0.25, 0.4));
    const PlanarMultibodySystem sys(builder.Build());
    Eigen::VectorXd q(3), v(3), F;
    q << 0.1, -0.2, 1.3;
    v << 0.5, 0.1, -0.8;
    sys.Forces(0.0, q, v, &F);
    // θ_b − θ_a = ±θ and θ̇_b − θ̇_a = ±θ̇; the torque on the disk is then the same closed form
    // with θ₀ → ±θ₀: −k (θ ∓ θ₀) − c θ̇ (body_b) or its opposite (body_a).
    const double expected =
        ground_is_b ? -(-5.0 * (-1.3 - 0.4) - 0.25 * 0.8) : -5.0 * (1.3 - 0.4) - 0.25 * (-0.8);
    EXPECT_NEAR(F(2), expected, 1e-14);  // a few flops on numbers of size ~5
    EXPECT_NEAR(F(0), 0.0, 1e-15);
    EXPECT_NEAR(F(1), 0.0, 1e-15);
    // V = ½ k (θ_b − θ_a − θ₀)².
    const double stretch = ground_is_b ? -1.3 - 0.4 : 1.3 - 0.4;
    EXPECT_NEAR(sys.PotentialEnergy(0.0, q), 0.5 * 5.0 * stretch * stretch, 1e-14);
  }
}

TEST(PlanarForcesTest, ConservativeForcesAreMinusTheGradientOfThePotential) {
  // At v = 0 every damping term vanishes: F(q) = −∂V/∂q for gravity, both springs, both torsional
  // springs and the constant load.
  const Fixture f = MakeSystem(/*with_scaled_load=*/false);
  Eigen::VectorXd q(6);
  q << 0.3, -0.4, 0.7, 1.1, 0.2, -0.5;
  const Eigen::VectorXd v = Eigen::VectorXd::Zero(6);
  Eigen::VectorXd F;
  f.system->Forces(0.0, q, v, &F);
  Eigen::VectorXd gradient(6);
  const double eps = 1e-5;
  for (int i = 0; i < 6; ++i) {
    Eigen::VectorXd qp = q, qm = q;
    qp(i) += eps;
    qm(i) -= eps;
    gradient(i) =
        (f.system->PotentialEnergy(0.0, qp) - f.system->PotentialEnergy(0.0, qm)) / (2.0 * eps);
  }
  std::printf("F + dV/dq: %.2e (|F| %.1f)\n", (F + gradient).lpNorm<Eigen::Infinity>(),
              F.lpNorm<Eigen::Infinity>());
  // Central difference: truncation ε² |V'''| / 6 ≈ 1e-10 · 100 and round-off ε_mach |V| / ε ≈
  // 2e-16 · 20 / 1e-5 ≈ 4e-10: 1e-7 on forces of size ~10 is safe.
  EXPECT_LT((F + gradient).lpNorm<Eigen::Infinity>(), 1e-7) << "F\n"
                                                            << F << "\n-dV/dq\n"
                                                            << -gradient;
  EXPECT_GT(F.lpNorm<Eigen::Infinity>(), 5.0);  // not vacuous
}

TEST(PlanarForcesTest, ScaledLoadIsScaledByItsProfileAndLeftOutOfThePotential) {
  const Fixture with = MakeSystem(true);
  const Fixture without = MakeSystem(false);
  Eigen::VectorXd q(6), v(6);
  q << 0.3, -0.4, 0.7, 1.1, 0.2, -0.5;
  v << 0.5, -1.2, 2.0, -0.3, 0.8, -1.7;
  // The scaled load alone: force φ(t) f at the body point s_w = R(θ_b) s, generalized torque
  // φ(t) (s_w × f + τ).
  const Eigen::Vector2d f(-2.0, 3.0), s(0.1, -0.2);
  const double tau = -0.8;
  const Eigen::Vector2d s_w = Eigen::Rotation2Dd(q(5)) * s;
  for (const double t : {0.0, 0.37, 1.9}) {
    Eigen::VectorXd F_with, F_without;
    with.system->Forces(t, q, v, &F_with);
    without.system->Forces(t, q, v, &F_without);
    const double phi = 0.5 + 2.0 * std::sin(3.0 * t);
    Eigen::VectorXd expected = Eigen::VectorXd::Zero(6);
    expected.segment<2>(3) = phi * f;
    expected(5) = phi * (s_w.x() * f.y() - s_w.y() * f.x() + tau);
    // Sums of the same terms in another order: round-off of forces of size ~20.
    EXPECT_LT((F_with - F_without - expected).lpNorm<Eigen::Infinity>(), 1e-13) << "t = " << t;
    // Not counted in V (documented in planar_model.h): the same terms are summed, so the
    // potentials agree to round-off (V ~ 20 J), whereas the load's −φ f·p would be ~1 J.
    EXPECT_NEAR(with.system->PotentialEnergy(t, q), without.system->PotentialEnergy(t, q), 1e-13);
  }
}

TEST(PlanarForcesTest, BuilderRejectsBadTorsionalSpringsAndLoadProfiles) {
  PlanarModelBuilder builder;
  const int a = builder.AddBody(Body("a", 1.0, 0.1));
  const int pin = builder.AddJoint(Revolute("pin", kGround, a, {0, 0}, {0, 0}));
  PlanarJoint slider;
  slider.name = "slider";
  slider.type = PlanarJointType::kPrismatic;
  slider.body_a = kGround;
  slider.body_b = a;
  const int prismatic = builder.AddJoint(slider);
  const auto message = [&](const PlanarTorsionalSpring& s) {
    try {
      builder.AddTorsionalSpring(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(Torsional("t1", prismatic, 1.0, 0.0, 0.0)).find("torsional spring 't1'"),
            std::string::npos);
  EXPECT_NE(message(Torsional("t1", prismatic, 1.0, 0.0, 0.0)).find("'slider' is not one"),
            std::string::npos);
  EXPECT_NE(message(Torsional("t2", 7, 1.0, 0.0, 0.0)).find("torsional spring 't2'"),
            std::string::npos);
  EXPECT_NE(message(Torsional("t3", pin, -1.0, 0.0, 0.0)).find("stiffness"), std::string::npos);
  EXPECT_NE(message(Torsional("t4", pin, 1.0, -2.0, 0.0)).find("damping"), std::string::npos);
  EXPECT_NE(message(Torsional("t5", pin, 1.0, 0.0, NAN)).find("angle0"), std::string::npos);
  EXPECT_EQ(message(Torsional("ok", pin, 1.0, 0.0, 0.0)), "no error");
  EXPECT_EQ(message(Torsional("ok", pin, 1.0, 0.0, 0.0)), "torsional spring 'ok': duplicate name");
  PlanarLoad load;
  load.name = "bad_profile";
  load.body = a;
  load.scale = Sine(0.0, INFINITY, 1.0);
  try {
    builder.AddLoad(load);
    ADD_FAILURE() << "a non-finite profile was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("load 'bad_profile'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace saltus::engine
