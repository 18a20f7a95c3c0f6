#include "tests/integrators/test_problems.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

#include "engine/constraint_block.h"

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

}  // namespace

std::vector<std::string> ProblemNames() { return {"circle", "rod", "rotor"}; }

std::unique_ptr<TestProblem> MakeProblem(const std::string& name) {
  if (name == "circle") return std::make_unique<CircleProblem>();
  if (name == "rod") return std::make_unique<RodProblem>();
  if (name == "rotor") return std::make_unique<RotorProblem>();
  throw std::invalid_argument("unknown test problem '" + name + "'");
}

double PositionError(const Eigen::VectorXd& q, const Eigen::VectorXd& q_exact) {
  return (q - q_exact).lpNorm<Eigen::Infinity>();
}

double PositionViolation(const engine::MechanicalSystem& system, const std::vector<int>& rows,
                         double t, const Eigen::VectorXd& q) {
  if (rows.empty()) return 0.0;
  Eigen::VectorXd g;
  system.ConstraintValues(t, q, rows, &g);
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

}  // namespace saltus::integrators::test_problems
