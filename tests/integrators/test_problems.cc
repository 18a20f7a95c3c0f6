#include "tests/integrators/test_problems.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/constraint_block.h"
#include "engine/planar_model.h"
#include "engine/rotation.h"
#include "engine/spatial_model.h"

namespace saltus::integrators::test_problems {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A point mass in the plane (nq = nv = 2, M = m I) with an optional linear spring to the origin.
class PlanarParticle final : public engine::MechanicalSystem {
 public:
  PlanarParticle(double m, double k) : m_(m), k_(k) {}
  int nq() const override { return 2; }
  int nv() const override { return 2; }
  void MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const override {
    *M = m_ * Eigen::MatrixXd::Identity(2, 2);
  }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& /*v*/,
              Eigen::VectorXd* F) const override {
    *F = -k_ * q;
    if (t >= t_nan_) F->setConstant(kNaN);
  }
  double t_nan_ = kInf;

 private:
  double m_, k_;
};

// g = (x² + y² − R²)/2.
class CircleRow final : public engine::ConstraintBlock {
 public:
  explicit CircleRow(double R) : R_(R) { info_.name = "circle"; }
  int num_rows() const override { return 1; }
  const engine::ConstraintRowInfo& row_info(int /*local_row*/) const override { return info_; }
  void Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> /*rows*/,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    g(0) = 0.5 * (q.squaredNorm() - R_ * R_);
  }
  void Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> /*rows*/,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G(0, 0) = q(0);
    G(0, 1) = q(1);
  }
  void Gamma(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& v,
             std::span<const int> /*rows*/, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    gamma(0) = v.squaredNorm();
  }

 private:
  double R_;
  engine::ConstraintRowInfo info_;
};

// g = −x sin Ωt + y cos Ωt (the bead stays on the line through the origin at angle Ωt).
class RotatingRodRow final : public engine::ConstraintBlock {
 public:
  explicit RotatingRodRow(double Omega) : Omega_(Omega) { info_.name = "rod"; }
  int num_rows() const override { return 1; }
  const engine::ConstraintRowInfo& row_info(int /*local_row*/) const override { return info_; }
  void Values(double t, const Eigen::VectorXd& q, std::span<const int> /*rows*/,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    g(0) = -q(0) * std::sin(Omega_ * t) + q(1) * std::cos(Omega_ * t);
  }
  void Jacobian(double t, const Eigen::VectorXd& /*q*/, std::span<const int> /*rows*/,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G(0, 0) = -std::sin(Omega_ * t);
    G(0, 1) = std::cos(Omega_ * t);
  }
  // g_t = −Ω (x cos Ωt + y sin Ωt).
  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> /*rows*/,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    g_t(0) = -Omega_ * (q(0) * std::cos(Omega_ * t) + q(1) * std::sin(Omega_ * t));
  }
  // g̈ = G v̇ + γ with γ = Ġ v + ∂g_t/∂q v + ∂²g/∂t²
  //   = −2Ω (vₓ cos Ωt + v_y sin Ωt) + Ω² (x sin Ωt − y cos Ωt).
  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> /*rows*/, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    const double c = std::cos(Omega_ * t), s = std::sin(Omega_ * t);
    gamma(0) = -2 * Omega_ * (v(0) * c + v(1) * s) + Omega_ * Omega_ * (q(0) * s - q(1) * c);
  }

 private:
  double Omega_;
  engine::ConstraintRowInfo info_;
};

// Rotor with q = (cos θ, sin θ), v = ω, J ω̇ = −c ω.
class Rotor final : public engine::MechanicalSystem {
 public:
  Rotor(double J, double c) : J_(J), c_(c) {}
  int nq() const override { return 2; }
  int nv() const override { return 1; }
  void MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const override {
    M->setConstant(1, 1, J_);
  }
  void Forces(double t, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override {
    F->setConstant(1, -c_ * v(0));
    if (t >= t_nan_) F->setConstant(kNaN);
  }
  // q ⊕ h v: rotation of the unit complex number q by the angle h v.
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override {
    const double a = h * v(0);
    const double ca = std::cos(a), sa = std::sin(a);
    const double x = q(0), y = q(1);
    q_next->resize(2);
    (*q_next)(0) = ca * x - sa * y;
    (*q_next)(1) = sa * x + ca * y;
  }
  double t_nan_ = kInf;

 private:
  double J_, c_;
};

class CircleProblem final : public TestProblem {
 public:
  CircleProblem() : system_(kMass, 0.0) {
    system_.AddConstraintBlock(std::make_shared<CircleRow>(kR));
  }
  std::string name() const override { return "circle"; }
  const engine::MechanicalSystem& system() const override { return system_; }
  std::vector<int> rows() const override { return {0}; }
  double t_end() const override { return 1.0; }
  double coarse_step() const override { return 0.1; }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    const double phi = kPhi0 + kOmega * t;
    *q = Eigen::Vector2d(kR * std::cos(phi), kR * std::sin(phi));
    *v = Eigen::Vector2d(-kR * kOmega * std::sin(phi), kR * kOmega * std::cos(phi));
  }
  void set_nan_forces_from(double t_nan) override { system_.t_nan_ = t_nan; }

 private:
  static constexpr double kMass = 1.5, kR = 0.8, kOmega = 2.0 * std::numbers::pi, kPhi0 = 0.3;
  PlanarParticle system_;
};

class RodProblem final : public TestProblem {
 public:
  RodProblem() : system_(kMass, kMass * (kOmega * kOmega + kOmega0 * kOmega0)) {
    system_.AddConstraintBlock(std::make_shared<RotatingRodRow>(kOmega));
  }
  std::string name() const override { return "rod"; }
  const engine::MechanicalSystem& system() const override { return system_; }
  std::vector<int> rows() const override { return {0}; }
  double t_end() const override { return 2.0; }
  double coarse_step() const override { return 0.1; }
  // Order 8: 4.2e-11 at 0.1 (round-off two halvings later), so 0.4.
  double order_study_step(int order) const override { return order > 5 ? 0.4 : 0.1; }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    const double r = kR0 * std::cos(kOmega0 * t) + kRdot0 / kOmega0 * std::sin(kOmega0 * t);
    const double rdot = -kR0 * kOmega0 * std::sin(kOmega0 * t) + kRdot0 * std::cos(kOmega0 * t);
    const double c = std::cos(kOmega * t), s = std::sin(kOmega * t);
    *q = Eigen::Vector2d(r * c, r * s);
    *v = Eigen::Vector2d(rdot * c - r * kOmega * s, rdot * s + r * kOmega * c);
  }
  void set_nan_forces_from(double t_nan) override { system_.t_nan_ = t_nan; }

 private:
  static constexpr double kMass = 2.0, kOmega = 1.5, kOmega0 = 2.0, kR0 = 1.0, kRdot0 = 0.5;
  PlanarParticle system_;
};

class RotorProblem final : public TestProblem {
 public:
  RotorProblem() : system_(kJ, kC) {}
  std::string name() const override { return "rotor"; }
  const engine::MechanicalSystem& system() const override { return system_; }
  std::vector<int> rows() const override { return {}; }
  double t_end() const override { return 2.0; }
  double coarse_step() const override { return 0.2; }
  // Order 8: 4.2e-12 at 0.2 (round-off one halving later), so 0.5.
  double order_study_step(int order) const override { return order > 5 ? 0.5 : 0.2; }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    const double beta = kC / kJ;
    const double theta = kTheta0 + kOmega0 / beta * (1.0 - std::exp(-beta * t));
    *q = Eigen::Vector2d(std::cos(theta), std::sin(theta));
    *v = Eigen::VectorXd::Constant(1, kOmega0 * std::exp(-beta * t));
  }
  void set_nan_forces_from(double t_nan) override { system_.t_nan_ = t_nan; }

 private:
  static constexpr double kJ = 0.5, kC = 0.75, kOmega0 = 6.0, kTheta0 = 1.0;
  Rotor system_;
};

// ---- Mechanisms (references independent of the integrators under test) ---------------------

// Coarsest step of the five-halving order study on the mechanisms (t_end = 2 s), measured with
// every scheme of the table: order 1 needs 0.005 (the half-implicit scheme's error on the heavy
// top changes sign near h = 0.01), orders 2–3 are asymptotic from 0.02, and the fifth-order
// schemes need the coarsest step `high` (0.032–0.04 s) because five halvings divide their error
// by 2^25 ≈ 3e7 and the finest run must stay above the round-off floor (≈ 1e-12 at 1e-3 s).
// Order 8 (DOP853, two halvings: table_cases.h StudyHalvings) starts at 0.08 s: errors 5e-8…3e-7
// at 0.032–0.04 s, so ≈ 1e-5…1e-4 at 0.08 s and above the floor at 0.02 s.
double OrderStudyStep(int order, double high) {
  if (order <= 1) return 0.005;
  if (order <= 3) return 0.02;
  if (order > 5) return 0.08;
  return high;
}

// A planar mechanism with n degrees of freedom described by minimal coordinates s: the pose
// (x, y, θ) of every body is a function of s, so its velocity is J(s) ṡ and its acceleration
// J(s) s̈ + J̇ ṡ. D'Alembert's principle reduces the constrained equations of motion to the ODE
//   (Jᵀ M J) s̈ = Jᵀ (F − M J̇ ṡ)
// (Haug, Computer-Aided Kinematics and Dynamics of Mechanical Systems, 1989, Sec. 6.6), with
// M = diag(m, m, J) per body and F the gravity forces. The reference is this ODE integrated by
// classical RK4 (Hairer, Nørsett & Wanner I, Sec. II.1) with steps ≤ kReferenceStep, mapped to
// the engine's (q, v) by the exact kinematics: it shares nothing with the integrators under test
// nor with the engine's constraint rows (TestProblems.ClosedFormsSolveTheirEquations checks
// that both describe the same motion).
class MinimalPlanarProblem : public TestProblem {
 public:
  const engine::MechanicalSystem& system() const override { return *system_; }
  std::vector<int> rows() const override {
    std::vector<int> r(static_cast<std::size_t>(system_->num_constraints()));
    for (int i = 0; i < system_->num_constraints(); ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
  }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    Reference(t, reference_step(), q, v);
  }
  // The engine's multibody systems have no NaN switch: the failure tests use the toy problems.
  void set_nan_forces_from(double /*t_nan*/) override {
    throw std::logic_error(name() + ": NaN forces are not available on mechanism problems");
  }
  double ReferenceErrorEstimate(double t) const override {
    Eigen::VectorXd q1, v1, q2, v2;
    Reference(t, reference_step(), &q1, &v1);
    Reference(t, 2 * reference_step(), &q2, &v2);
    // Richardson: RK4's error with step h is (2⁴ − 1)⁻¹ of the difference of the h and 2h runs.
    return std::max((q1 - q2).lpNorm<Eigen::Infinity>(), (v1 - v2).lpNorm<Eigen::Infinity>()) /
           15.0;
  }

 protected:
  static constexpr double kG = 9.81;

  // Largest RK4 step of the reference.
  virtual double reference_step() const = 0;

  // Poses (3 per body), J (3·bodies × n) and J̇ ṡ (3·bodies) at (s, ṡ).
  virtual void Kinematics(const Eigen::VectorXd& s, const Eigen::VectorXd& sdot,
                          Eigen::VectorXd* pose, Eigen::MatrixXd* J,
                          Eigen::VectorXd* Jdot_sdot) const = 0;

  void Build(const std::shared_ptr<const engine::PlanarModel>& model, const Eigen::VectorXd& s0,
             const Eigen::VectorXd& sdot0) {
    system_ = std::make_unique<engine::PlanarMultibodySystem>(model);
    s0_ = s0;
    sdot0_ = sdot0;
    const auto& bodies = model->bodies();
    mass_.resize(3 * static_cast<Eigen::Index>(bodies.size()));
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      mass_.segment<3>(3 * static_cast<Eigen::Index>(i)) << bodies[i].mass, bodies[i].mass,
          bodies[i].inertia;
    }
  }

 private:
  // The reference at t with RK4 steps ≤ h_max. Cached across instances (every test builds its
  // own problem; the order study asks for the same t_end in every test).
  void Reference(double t, double h_max, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
    struct Entry {
      std::string problem;
      double t, h_max;
      Eigen::VectorXd q, v;
    };
    static std::vector<Entry> cache;
    for (const Entry& e : cache) {
      if (e.problem == name() && e.t == t && e.h_max == h_max) {
        *q = e.q;
        *v = e.v;
        return;
      }
    }
    Eigen::VectorXd s = s0_, sdot = sdot0_;
    Integrate(t, h_max, &s, &sdot);
    Map(s, sdot, q, v);
    cache.push_back({name(), t, h_max, *q, *v});
  }
  void Map(const Eigen::VectorXd& s, const Eigen::VectorXd& sdot, Eigen::VectorXd* q,
           Eigen::VectorXd* v) const {
    Eigen::MatrixXd J;
    Eigen::VectorXd Jdot_sdot;
    Kinematics(s, sdot, q, &J, &Jdot_sdot);
    *v = J * sdot;
  }
  Eigen::VectorXd Acceleration(const Eigen::VectorXd& s, const Eigen::VectorXd& sdot) const {
    Eigen::VectorXd pose, Jdot_sdot;
    Eigen::MatrixXd J;
    Kinematics(s, sdot, &pose, &J, &Jdot_sdot);
    Eigen::VectorXd F = Eigen::VectorXd::Zero(mass_.size());
    for (Eigen::Index i = 0; i < mass_.size(); i += 3) F(i + 1) = -mass_(i) * kG;
    const Eigen::MatrixXd MJ = mass_.asDiagonal() * J;
    return (J.transpose() * MJ).ldlt().solve(J.transpose() * (F - mass_.cwiseProduct(Jdot_sdot)));
  }
  void Integrate(double t, double h_max, Eigen::VectorXd* s, Eigen::VectorXd* sdot) const {
    const int n = std::max(1, static_cast<int>(std::ceil(t / h_max - 1e-9)));
    const double h = t / n;
    for (int k = 0; k < n; ++k) {
      const Eigen::VectorXd x1 = *s, v1 = *sdot, a1 = Acceleration(x1, v1);
      const Eigen::VectorXd x2 = x1 + 0.5 * h * v1, v2 = v1 + 0.5 * h * a1;
      const Eigen::VectorXd a2 = Acceleration(x2, v2);
      const Eigen::VectorXd x3 = x1 + 0.5 * h * v2, v3 = v1 + 0.5 * h * a2;
      const Eigen::VectorXd a3 = Acceleration(x3, v3);
      const Eigen::VectorXd x4 = x1 + h * v3, v4 = v1 + h * a3;
      const Eigen::VectorXd a4 = Acceleration(x4, v4);
      *s = x1 + h / 6 * (v1 + 2 * v2 + 2 * v3 + v4);
      *sdot = v1 + h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    }
  }

  std::unique_ptr<engine::PlanarMultibodySystem> system_;
  Eigen::VectorXd s0_, sdot0_, mass_;
};

// Free (undriven) planar slider-crank with Haug's data (BENCHMARKS.md; the crank turns in the
// plane of the mechanism): crank a = 0.08 m, 1.2 kg, J = 1e-4; rod b = 0.3 m, 0.5 kg, J = 4e-3;
// slider 2 kg, J = 1e-4 on the x axis; crank pivot at the origin; gravity −9.81 ŷ. Minimal
// coordinate: the crank angle φ, from φ₀ = −π/2 (crank down) at φ̇₀ = 2π rad/s (Haug's drive
// rate, here only the initial condition): the crank swings about the bottom with an amplitude of
// about 1 rad (period ≈ 1 s), pushing the slider to and fro. (Started at the top, the crank would
// loop at up to 30 rad/s and the implicit schemes leave the asymptotic range below h = 2.5e-3.)
// Rod angle ψ from
// a sin φ + b sin ψ = 0 (cos ψ > 0 as b > a). Bodies' x axes along the links, centres of mass at
// the midpoints: 9 coordinates, 8 rows (3 revolute + 1 prismatic), 1 DOF.
class SliderCrankProblem final : public MinimalPlanarProblem {
 public:
  SliderCrankProblem() {
    const double phi = -std::numbers::pi / 2, phi_dot = 2 * std::numbers::pi;
    Eigen::VectorXd s0(1), sdot0(1), q0, v0;
    s0 << phi;
    sdot0 << phi_dot;
    Eigen::MatrixXd J;
    Eigen::VectorXd Jdot_sdot;
    Kinematics(s0, sdot0, &q0, &J, &Jdot_sdot);
    v0 = J * sdot0;
    engine::PlanarModelBuilder builder;
    const char* names[3] = {"crank", "rod", "slider"};
    const double masses[3] = {1.2, 0.5, 2.0}, inertias[3] = {1e-4, 4e-3, 1e-4};
    for (int i = 0; i < 3; ++i) {
      engine::PlanarBody body;
      body.name = names[i];
      body.mass = masses[i];
      body.inertia = inertias[i];
      body.q0 = q0.segment<3>(3 * i);
      body.v0 = v0.segment<3>(3 * i);
      builder.AddBody(body);
    }
    auto joint = [&](const char* name, engine::PlanarJointType type, int a, int b,
                     const Eigen::Vector2d& pa, const Eigen::Vector2d& pb) {
      engine::PlanarJoint j;
      j.name = name;
      j.type = type;
      j.body_a = a;
      j.body_b = b;
      j.point_a = pa;
      j.point_b = pb;
      builder.AddJoint(j);
    };
    using engine::PlanarJointType;
    joint("pivot", PlanarJointType::kRevolute, engine::kGround, 0, {0, 0}, {-kA / 2, 0});
    joint("pin", PlanarJointType::kRevolute, 0, 1, {kA / 2, 0}, {-kB / 2, 0});
    joint("wrist", PlanarJointType::kRevolute, 1, 2, {kB / 2, 0}, {0, 0});
    joint("guide", PlanarJointType::kPrismatic, engine::kGround, 2, {0, 0}, {0, 0});
    builder.SetGravity({0.0, -kG});
    Build(builder.Build(), s0, sdot0);
  }
  std::string name() const override { return "slider_crank"; }
  double t_end() const override { return 2.0; }
  double coarse_step() const override { return 0.02; }
  // Steps from the five-halving study (OrderStudyStep, 0.032 for order ≥ 4).
  double order_study_step(int order) const override { return OrderStudyStep(order, 0.032); }
  double reference_step() const override { return 3.125e-5; }

 private:
  static constexpr double kA = 0.08, kB = 0.3;
  void Kinematics(const Eigen::VectorXd& s, const Eigen::VectorXd& sdot, Eigen::VectorXd* pose,
                  Eigen::MatrixXd* J, Eigen::VectorXd* Jdot_sdot) const override {
    const double phi = s(0), w2 = sdot(0) * sdot(0);
    const double cf = std::cos(phi), sf = std::sin(phi);
    const double psi = std::asin(-kA * sf / kB), cp = std::cos(psi), sp = std::sin(psi);
    // ψ' = dψ/dφ and ψ'' from differentiating a sin φ + b sin ψ = 0 twice.
    const double d1 = -kA * cf / (kB * cp);
    const double d2 = (kA * sf + kB * sp * d1 * d1) / (kB * cp);
    pose->resize(9);
    J->setZero(9, 1);
    Jdot_sdot->setZero(9);
    // Crank: centre (a/2)(cos φ, sin φ), angle φ.
    *pose << kA / 2 * cf, kA / 2 * sf, phi,
        // Rod: centre A + (b/2)(cos ψ, sin ψ), A = a (cos φ, sin φ), angle ψ.
        kA * cf + kB / 2 * cp, kA * sf + kB / 2 * sp, psi,
        // Slider: (a cos φ + b cos ψ, 0), angle 0.
        kA * cf + kB * cp, 0.0, 0.0;
    *J << -kA / 2 * sf, kA / 2 * cf, 1.0, -kA * sf - kB / 2 * sp * d1, kA * cf + kB / 2 * cp * d1,
        d1, -kA * sf - kB * sp * d1, 0.0, 0.0;
    // Second derivatives with respect to φ, times φ̇².
    *Jdot_sdot << -kA / 2 * cf, -kA / 2 * sf, 0.0, -kA * cf + kB / 2 * (-sp * d2 - cp * d1 * d1),
        -kA * sf + kB / 2 * (cp * d2 - sp * d1 * d1), d2, -kA * cf - kB * (sp * d2 + cp * d1 * d1),
        0.0, 0.0;
    *Jdot_sdot *= w2;
  }
};

// Haug's planar double pendulum (BENCHMARKS.md): bars of 4 m (78 kg) and 2 m (39 kg), 0.05 m
// square section, J = m (w² + L²)/12 about the centre; bar 1 pinned to the ground at the origin
// and released horizontal (along +x), bar 2 pinned to its tip and hanging, both at rest; gravity
// −9.81 ŷ. Minimal coordinates: the absolute bar angles (θ₁, θ₂), from (0, −π/2). Bodies' x
// axes along the bars, centres of mass at the midpoints: 6 coordinates, 4 rows, 2 DOF.
class DoublePendulumProblem final : public MinimalPlanarProblem {
 public:
  DoublePendulumProblem() {
    Eigen::VectorXd s0(2), sdot0 = Eigen::VectorXd::Zero(2), q0, v0, Jdot_sdot;
    s0 << 0.0, -std::numbers::pi / 2;
    Eigen::MatrixXd J;
    Kinematics(s0, sdot0, &q0, &J, &Jdot_sdot);
    v0 = J * sdot0;
    engine::PlanarModelBuilder builder;
    const double lengths[2] = {kL1, kL2}, masses[2] = {78.0, 39.0};
    for (int i = 0; i < 2; ++i) {
      engine::PlanarBody body;
      body.name = "bar" + std::to_string(i + 1);
      body.mass = masses[i];
      body.inertia = masses[i] * (kW * kW + lengths[i] * lengths[i]) / 12;
      body.q0 = q0.segment<3>(3 * i);
      body.v0 = v0.segment<3>(3 * i);
      builder.AddBody(body);
    }
    engine::PlanarJoint j;
    j.type = engine::PlanarJointType::kRevolute;
    j.name = "O";
    j.body_a = engine::kGround;
    j.body_b = 0;
    j.point_a = Eigen::Vector2d::Zero();
    j.point_b = Eigen::Vector2d(-kL1 / 2, 0);
    builder.AddJoint(j);
    j.name = "A";
    j.body_a = 0;
    j.body_b = 1;
    j.point_a = Eigen::Vector2d(kL1 / 2, 0);
    j.point_b = Eigen::Vector2d(-kL2 / 2, 0);
    builder.AddJoint(j);
    builder.SetGravity({0.0, -kG});
    Build(builder.Build(), s0, sdot0);
  }
  std::string name() const override { return "double_pendulum"; }
  double t_end() const override { return 2.0; }
  double coarse_step() const override { return 0.02; }
  // Steps from the five-halving study (OrderStudyStep, 0.04 for order ≥ 4).
  double order_study_step(int order) const override { return OrderStudyStep(order, 0.04); }
  double reference_step() const override { return 6.25e-5; }

 private:
  static constexpr double kL1 = 4.0, kL2 = 2.0, kW = 0.05;
  void Kinematics(const Eigen::VectorXd& s, const Eigen::VectorXd& sdot, Eigen::VectorXd* pose,
                  Eigen::MatrixXd* J, Eigen::VectorXd* Jdot_sdot) const override {
    const double c1 = std::cos(s(0)), s1 = std::sin(s(0)), c2 = std::cos(s(1)), s2 = std::sin(s(1));
    const double w1 = sdot(0) * sdot(0), w2 = sdot(1) * sdot(1);
    pose->resize(6);
    *pose << kL1 / 2 * c1, kL1 / 2 * s1, s(0), kL1 * c1 + kL2 / 2 * c2, kL1 * s1 + kL2 / 2 * s2,
        s(1);
    J->resize(6, 2);
    *J << -kL1 / 2 * s1, 0, kL1 / 2 * c1, 0, 1, 0, -kL1 * s1, -kL2 / 2 * s2, kL1 * c1, kL2 / 2 * c2,
        0, 1;
    Jdot_sdot->resize(6);
    *Jdot_sdot << -kL1 / 2 * c1 * w1, -kL1 / 2 * s1 * w1, 0, -kL1 * c1 * w1 - kL2 / 2 * c2 * w2,
        -kL1 * s1 * w1 - kL2 / 2 * s2 * w2, 0;
  }
};

// Heavy symmetric top in steady precession (a closed form that exercises quaternions and the
// exponential map): m = 1 kg, centre of mass l = 0.05 m up the symmetry axis (body z; body frame
// at the pivot), J₁ = 0.004, J₃ = 0.006 kg·m² about the centre of mass, spherical joint with the
// ground at the origin, gravity −9.81 ẑ, tilt ϑ = 0.4 rad, spin ω₃ = 30 rad/s. Steady precession
// at rate Ω about ẑ (Goldstein, Classical Mechanics, 3rd ed., Sec. 5.7):
//   Ω (J₃ ω₃ − J₁' Ω cos ϑ) = m g l,   J₁' = J₁ + m l²,
// slow root Ω ≈ 3.1 rad/s, spin rate ψ̇ = ω₃ − Ω cos ϑ. Attitude R(t) = R_z(Ω t) R_x(ϑ) R_z(ψ̇ t),
// body angular velocity ω = Ω R(t)ᵀ ẑ + ψ̇ ẑ. 7 coordinates, 6 velocities, 3 rows.
class HeavyTopProblem final : public TestProblem {
 public:
  HeavyTopProblem() {
    const double J1p = kJ1 + kM * kL * kL;
    const double a = J1p * std::cos(kTilt), b = -kJ3 * kSpin, c = kM * kG * kL;
    Omega_ = (-b - std::sqrt(b * b - 4 * a * c)) / (2 * a);
    psi_dot_ = kSpin - Omega_ * std::cos(kTilt);
    Eigen::VectorXd q0, v0;
    Exact(0.0, &q0, &v0);
    engine::SpatialModelBuilder builder;
    engine::SpatialBody top;
    top.name = "top";
    top.mass = kM;
    top.inertia = Eigen::Vector3d(kJ1, kJ1, kJ3).asDiagonal();
    top.com = Eigen::Vector3d(0, 0, kL);
    top.quaternion = q0.segment<4>(3);
    top.angular_velocity = v0.segment<3>(3);
    builder.AddBody(top);
    engine::SpatialJoint pivot;
    pivot.name = "pivot";
    pivot.type = engine::SpatialJointType::kSpherical;
    pivot.body_a = engine::kGround;
    pivot.body_b = 0;
    builder.AddJoint(pivot);
    builder.SetGravity({0.0, 0.0, -kG});
    system_ = std::make_unique<engine::SpatialMultibodySystem>(builder.Build());
  }
  std::string name() const override { return "heavy_top"; }
  const engine::MechanicalSystem& system() const override { return *system_; }
  std::vector<int> rows() const override { return {0, 1, 2}; }
  double t_end() const override { return 2.0; }
  double coarse_step() const override { return 0.02; }
  // Steps from the five-halving study (OrderStudyStep, 0.032 for order ≥ 4).
  double order_study_step(int order) const override { return OrderStudyStep(order, 0.032); }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    auto about = [](const Eigen::Vector3d& axis, double angle) {
      return engine::QuaternionExp(angle * axis);
    };
    const Eigen::Vector4d Q = engine::QuaternionMultiply(
        engine::QuaternionMultiply(about(Eigen::Vector3d::UnitZ(), Omega_ * t),
                                   about(Eigen::Vector3d::UnitX(), kTilt)),
        about(Eigen::Vector3d::UnitZ(), psi_dot_ * t));
    const Eigen::Matrix3d R = engine::QuaternionToRotation(Q);
    q->setZero(7);
    q->segment<4>(3) = Q;
    v->setZero(6);
    v->segment<3>(3) =
        Omega_ * R.transpose() * Eigen::Vector3d::UnitZ() + psi_dot_ * Eigen::Vector3d::UnitZ();
  }
  void set_nan_forces_from(double /*t_nan*/) override {
    throw std::logic_error(name() + ": NaN forces are not available on mechanism problems");
  }

 private:
  static constexpr double kM = 1.0, kL = 0.05, kJ1 = 0.004, kJ3 = 0.006, kTilt = 0.4, kSpin = 30.0,
                          kG = 9.81;
  double Omega_ = 0, psi_dot_ = 0;
  std::unique_ptr<engine::SpatialMultibodySystem> system_;
};

}  // namespace

std::vector<std::string> ProblemNames() { return {"circle", "rod", "rotor"}; }

std::vector<std::string> MechanismNames() {
  return {"slider_crank", "double_pendulum", "heavy_top"};
}

std::unique_ptr<TestProblem> MakeProblem(const std::string& name) {
  if (name == "circle") return std::make_unique<CircleProblem>();
  if (name == "rod") return std::make_unique<RodProblem>();
  if (name == "rotor") return std::make_unique<RotorProblem>();
  if (name == "slider_crank") return std::make_unique<SliderCrankProblem>();
  if (name == "double_pendulum") return std::make_unique<DoublePendulumProblem>();
  if (name == "heavy_top") return std::make_unique<HeavyTopProblem>();
  throw std::invalid_argument("unknown test problem '" + name + "'");
}

double PositionError(const Eigen::VectorXd& q, const Eigen::VectorXd& q_exact) {
  return (q - q_exact).lpNorm<Eigen::Infinity>();
}

double PositionViolation(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q) {
  // Velocity-level rows have no position constraint.
  const std::vector<int> position_rows = system.PositionLevelRows(rows);
  if (position_rows.empty()) return 0.0;
  Eigen::VectorXd g;
  system.ConstraintValues(t, q, position_rows, &g);
  return g.lpNorm<Eigen::Infinity>();
}

double VelocityViolation(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  if (rows.empty()) return 0.0;
  Eigen::MatrixXd G;
  Eigen::VectorXd g_t;
  system.ConstraintJacobian(t, q, rows, &G);
  system.ConstraintTimeDerivative(t, q, rows, &g_t);
  return (G * v + g_t).lpNorm<Eigen::Infinity>();
}

std::unique_ptr<engine::PlanarMultibodySystem> MakeUnitDoublePendulum(double angle0) {
  engine::PlanarModelBuilder b;
  engine::PlanarBody bar1, bar2;
  const double theta = -std::numbers::pi / 2 + angle0;
  const Eigen::Vector2d u(std::cos(theta), std::sin(theta));
  bar1.name = "bar1";
  bar1.inertia = 1.0 / 12.0;
  bar1.q0 << 0.5 * u.x(), 0.5 * u.y(), theta;
  bar2.name = "bar2";
  bar2.inertia = 1.0 / 12.0;
  bar2.q0 << 1.5 * u.x(), 1.5 * u.y(), theta;
  const int i1 = b.AddBody(bar1);
  const int i2 = b.AddBody(bar2);
  engine::PlanarJoint pin;
  pin.name = "pin";
  pin.body_b = i1;
  pin.point_b = Eigen::Vector2d(-0.5, 0.0);
  b.AddJoint(pin);
  engine::PlanarJoint elbow;
  elbow.name = "elbow";
  elbow.body_a = i1;
  elbow.body_b = i2;
  elbow.point_a = Eigen::Vector2d(0.5, 0.0);
  elbow.point_b = Eigen::Vector2d(-0.5, 0.0);
  b.AddJoint(elbow);
  b.SetGravity(Eigen::Vector2d(0.0, -9.81));
  return std::make_unique<engine::PlanarMultibodySystem>(b.Build());
}

double LogLogSlope(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

std::shared_ptr<const engine::PlanarModel> PlanarDoubleFourBar() {
  engine::PlanarModelBuilder builder;
  int crank[3], coupler[2];
  for (int k = 0; k < 3; ++k) {
    engine::PlanarBody body;
    body.name = "crank" + std::to_string(k);
    body.mass = 1.0;
    body.inertia = 1.0 / 12.0;
    body.q0 << k, 0.5, std::numbers::pi / 2;
    body.v0 << 0.5, 0.0, -1.0;
    crank[k] = builder.AddBody(body);
  }
  for (int k = 0; k < 2; ++k) {
    engine::PlanarBody body;
    body.name = "coupler" + std::to_string(k);
    body.mass = 1.0;
    body.inertia = 1.0 / 12.0;
    body.q0 << k + 0.5, 1.0, 0.0;
    body.v0 << 1.0, 0.0, 0.0;
    coupler[k] = builder.AddBody(body);
  }
  engine::PlanarJoint j;
  j.type = engine::PlanarJointType::kRevolute;
  auto add = [&](const std::string& name, int a, int b, Eigen::Vector2d pa, Eigen::Vector2d pb) {
    j.name = name;
    j.body_a = a;
    j.body_b = b;
    j.point_a = pa;
    j.point_b = pb;
    builder.AddJoint(j);
  };
  for (int k = 0; k < 3; ++k) {
    add("pivot" + std::to_string(k), engine::kGround, crank[k], {1.0 * k, 0.0}, {-0.5, 0.0});
  }
  for (int k = 0; k < 2; ++k) {
    add("tip" + std::to_string(k), crank[k], coupler[k], {0.5, 0.0}, {-0.5, 0.0});
    add("tip" + std::to_string(k + 1) + "r", crank[k + 1], coupler[k], {0.5, 0.0}, {0.5, 0.0});
  }
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  return builder.Build();
}

FourBarRun RunPlanarDoubleFourBar(Integrator* integrator, double t_end) {
  const engine::PlanarMultibodySystem system(PlanarDoubleFourBar());
  std::vector<int> rows(static_cast<std::size_t>(system.num_constraints()));
  for (int r = 0; r < system.num_constraints(); ++r) rows[static_cast<std::size_t>(r)] = r;
  const Eigen::VectorXd q0 = system.model().InitialPositions();
  const Eigen::VectorXd v0 = system.model().InitialVelocities();
  integrator->Reset(system, rows, 0.0, q0, v0);
  auto energy = [&](const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
    return system.KineticEnergy(q, v) + system.PotentialEnergy(0.0, q);
  };
  const double E0 = energy(q0, v0);
  Eigen::VectorXd q_dense, v_dense;
  FourBarRun run;
  while (integrator->t() < t_end) {
    run.status = integrator->Step(t_end);
    if (run.status != StepStatus::kAccepted) {
      run.t_stop = integrator->t();
      run.drift = run.branch = std::numeric_limits<double>::infinity();
      break;
    }
    const Eigen::VectorXd& q = integrator->q();
    run.drift = std::max(run.drift, std::abs(energy(q, integrator->v()) - E0));
    for (const double theta : {0.25, 0.5, 0.75}) {
      const double s =
          integrator->t_previous() + theta * (integrator->t() - integrator->t_previous());
      integrator->Interpolate(s, &q_dense, &v_dense);
      run.dense_drift = std::max(run.dense_drift, std::abs(energy(q_dense, v_dense) - E0));
    }
    // Parallelogram branch: equal crank angles (bodies 0-2), couplers (3, 4) not rotated.
    for (int k = 1; k < 3; ++k) {
      run.branch =
          std::max(run.branch, std::abs(std::remainder(q(3 * k + 2) - q(2), 2 * std::numbers::pi)));
    }
    for (int k = 3; k < 5; ++k) {
      run.branch =
          std::max(run.branch, std::abs(std::remainder(q(3 * k + 2), 2 * std::numbers::pi)));
    }
  }
  run.steps = integrator->stats().accepted_steps;
  std::printf(
      "planar double four-bar, %s rtol %.0e atol %.0e: %ld steps, max |E - E0| = %.2e J "
      "(dense output %.2e J), branch %.2e\n",
      std::string(integrator->name()).c_str(), integrator->options().rtol,
      integrator->options().atol, run.steps, run.drift, run.dense_drift, run.branch);
  return run;
}

}  // namespace saltus::integrators::test_problems
