#include "tests/integrators/friction_problems.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace saltus::integrators::friction_problems {

namespace {

// Contact of a round planar body of radius R with the line y = 0 (header).
class LineContact final : public engine::ConstraintBlock {
 public:
  LineContact(double R, double mu) : R_(R) {
    info_[0].kind = engine::ConstraintKind::kUnilateral;
    info_[0].name = "contact";
    info_[0].friction = mu;
    info_[1].kind = engine::ConstraintKind::kTangential;
    info_[1].name = "contact.t";
    info_[1].level = engine::ConstraintLevel::kVelocity;
    info_[1].normal_row = 0;
  }
  int num_rows() const override { return 2; }
  const engine::ConstraintRowInfo& row_info(int local_row) const override {
    return info_[static_cast<std::size_t>(local_row)];
  }
  void Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      g(static_cast<Eigen::Index>(i)) = rows[i] == 0 ? q(1) - R_ : kVelocityRowPoison;
    }
  }
  void Jacobian(double /*t*/, const Eigen::VectorXd& /*q*/, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      G.row(r) =
          rows[i] == 0 ? Eigen::RowVector3d(0.0, 1.0, 0.0) : Eigen::RowVector3d(1.0, 0.0, R_);
    }
  }
  void Gamma(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/,
             std::span<const int> /*rows*/, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    gamma.setZero();
  }

 private:
  double R_;
  std::array<engine::ConstraintRowInfo, 2> info_;
};

// Contact of a sphere of radius R with the plane z = 0 (header).
class PlaneContact final : public engine::ConstraintBlock {
 public:
  PlaneContact(double R, double mu) : R_(R) {
    info_[0].kind = engine::ConstraintKind::kUnilateral;
    info_[0].name = "contact";
    info_[0].friction = mu;
    for (int k = 1; k <= 2; ++k) {
      info_[static_cast<std::size_t>(k)].kind = engine::ConstraintKind::kTangential;
      info_[static_cast<std::size_t>(k)].name = "contact.t" + std::to_string(k);
      info_[static_cast<std::size_t>(k)].level = engine::ConstraintLevel::kVelocity;
      info_[static_cast<std::size_t>(k)].normal_row = 0;
    }
  }
  int num_rows() const override { return 3; }
  const engine::ConstraintRowInfo& row_info(int local_row) const override {
    return info_[static_cast<std::size_t>(local_row)];
  }
  void Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      g(static_cast<Eigen::Index>(i)) = rows[i] == 0 ? q(2) - R_ : kVelocityRowPoison;
    }
  }
  void Jacobian(double /*t*/, const Eigen::VectorXd& /*q*/, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    G.setZero();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      if (rows[i] == 0) {
        G(r, 2) = 1.0;
      } else if (rows[i] == 1) {  // ẋ − R ω_y
        G(r, 0) = 1.0;
        G(r, 4) = -R_;
      } else {  // ẏ + R ω_x
        G(r, 1) = 1.0;
        G(r, 3) = R_;
      }
    }
  }
  void Gamma(double /*t*/, const Eigen::VectorXd& /*q*/, const Eigen::VectorXd& /*v*/,
             std::span<const int> /*rows*/, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    gamma.setZero();
  }

 private:
  double R_;
  std::array<engine::ConstraintRowInfo, 3> info_;
};

void NoNanSwitch() { throw std::logic_error("friction problems have no NaN switch"); }

// sliding_spring (header).
class SlidingSpringProblem final : public test_problems::TestProblem {
 public:
  SlidingSpringProblem() : body_(Parameters()), view_(body_) {
    view_.SetSlidingContacts({PlanarSlide(body_.parameters().mu, 1.0)});
  }
  std::string name() const override { return "sliding_spring"; }
  const engine::MechanicalSystem& system() const override { return view_; }
  std::vector<int> rows() const override { return {0}; }
  double t_end() const override { return 0.25; }
  double coarse_step() const override { return 0.025; }
  // Order 8: 1.2e-12 at 0.125, so the whole span 0.25 (two halvings, table_cases.h).
  double order_study_step(int order) const override {
    return order > 5 ? 0.25 : order >= 4 ? 0.125 : 0.025;
  }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    const PlanarBodyParameters& p = body_.parameters();
    const double w = std::sqrt(p.k / p.m), c = p.mu * kGravity / (w * w);
    const double b = p.mu * p.m * kGravity * p.R / p.J;  // friction torque / J
    *q = Eigen::Vector3d(-c + c * std::cos(w * t) + (kV0 / w) * std::sin(w * t), p.R,
                         -0.5 * b * t * t);
    *v = Eigen::Vector3d(-c * w * std::sin(w * t) + kV0 * std::cos(w * t), 0.0, -b * t);
  }
  void set_nan_forces_from(double) override { NoNanSwitch(); }

 private:
  static constexpr double kV0 = 3.0;
  static PlanarBodyParameters Parameters() {
    PlanarBodyParameters p;
    p.m = 1.0, p.R = 1.0, p.J = 0.5, p.k = 4.0, p.mu = 0.3;
    return p;
  }
  PlanarContactBody body_;
  engine::SlidingFrictionView view_;
};

// rolling_spring (header).
class RollingSpringProblem final : public test_problems::TestProblem {
 public:
  RollingSpringProblem() : body_(Parameters()) {}
  std::string name() const override { return "rolling_spring"; }
  const engine::MechanicalSystem& system() const override { return body_; }
  std::vector<int> rows() const override { return {0, 1}; }
  double t_end() const override { return 1.0; }
  double coarse_step() const override { return 0.1; }
  // Order 8: 8.8e-10 at 0.25, round-off two halvings later, so 0.5.
  double order_study_step(int order) const override {
    return order > 5 ? 0.5 : order >= 4 ? 0.25 : 0.1;
  }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    const PlanarBodyParameters& p = body_.parameters();
    const double w = std::sqrt(p.k / (p.m + p.J / (p.R * p.R)));
    const double x = kX0 * std::cos(w * t) + (kV0 / w) * std::sin(w * t);
    const double xdot = -kX0 * w * std::sin(w * t) + kV0 * std::cos(w * t);
    *q = Eigen::Vector3d(x, p.R, -(x - kX0) / p.R);
    *v = Eigen::Vector3d(xdot, 0.0, -xdot / p.R);
  }
  void set_nan_forces_from(double) override { NoNanSwitch(); }

 private:
  static constexpr double kX0 = 0.2, kV0 = 1.0;
  static PlanarBodyParameters Parameters() {
    PlanarBodyParameters p;
    p.m = 1.0, p.R = 0.5, p.J = 0.125, p.k = 6.0, p.mu = 0.3;
    return p;
  }
  PlanarContactBody body_;
};

// sphere_turning (header). Reduced state y = (x, y, φ_x, φ_y, ẋ, ẏ, ω_x, ω_y); z = R, ż = 0,
// φ_z = ω_z = 0 and λ_N = m g_n throughout.
class SphereTurningProblem final : public test_problems::TestProblem {
 public:
  SphereTurningProblem() : sphere_(Parameters()), view_(sphere_) {
    view_.SetSlidingContacts({SpatialSlide(sphere_.parameters().mu, Eigen::Vector2d(0.0, 1.0))});
  }
  std::string name() const override { return "sphere_turning"; }
  const engine::MechanicalSystem& system() const override { return view_; }
  std::vector<int> rows() const override { return {0}; }
  double t_end() const override { return 1.0; }
  double coarse_step() const override { return 0.1; }
  // Order 8: 5.6e-11 at 0.0625, round-off one halving later, so 0.25.
  double order_study_step(int order) const override {
    return order > 5 ? 0.25 : order >= 4 ? 0.0625 : 0.025;
  }
  void Exact(double t, Eigen::VectorXd* q, Eigen::VectorXd* v) const override {
    Expand(Reference(t, kReferenceSteps), q, v);
  }
  // Richardson: RK4 error ≈ (y_N − y_{N/2}) / (2⁴ − 1).
  double ReferenceErrorEstimate(double t) const override {
    return (Reference(t, kReferenceSteps) - Reference(t, kReferenceSteps / 2))
               .lpNorm<Eigen::Infinity>() /
           15.0;
  }
  void set_nan_forces_from(double) override { NoNanSwitch(); }

 private:
  static constexpr int kReferenceSteps = 1 << 14;  // over t_end
  using State = Eigen::Matrix<double, 8, 1>;
  static SphereParameters Parameters() {
    SphereParameters p;
    p.g_x = 2.0, p.mu = 0.05, p.k = 4.0;
    return p;
  }
  State Rate(const State& y) const {
    const SphereParameters& p = sphere_.parameters();
    const double R = p.R, J = p.J();
    const double lambda = p.m * p.g_n;
    const Eigen::Vector2d slip(y(4) - R * y(7), y(5) + R * y(6));
    const Eigen::Vector2d d = slip.normalized();
    State r;
    r.head<4>() = y.tail<4>();
    r(4) = p.g_x - (p.k * y(0) + p.mu * lambda * d(0)) / p.m;
    r(5) = p.g_y - (p.k * y(1) + p.mu * lambda * d(1)) / p.m;
    r(6) = -p.mu * lambda * R * d(1) / J;
    r(7) = p.mu * lambda * R * d(0) / J;
    return r;
  }
  // Classical RK4 from the launch state over [0, t], n steps per t_end.
  State Reference(double t, int n) const {
    State y = State::Zero();
    y(5) = 1.0;  // ẏ = 1, no spin: slip velocity (0, 1)
    const int steps = std::max(1, static_cast<int>(std::ceil(n * t / t_end())));
    const double h = t / steps;
    for (int i = 0; i < steps; ++i) {
      const State k1 = Rate(y), k2 = Rate(y + 0.5 * h * k1), k3 = Rate(y + 0.5 * h * k2),
                  k4 = Rate(y + h * k3);
      y += (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    return y;
  }
  void Expand(const State& y, Eigen::VectorXd* q, Eigen::VectorXd* v) const {
    q->setZero(6);
    v->setZero(6);
    (*q)(0) = y(0), (*q)(1) = y(1), (*q)(2) = sphere_.parameters().R;
    (*q)(3) = y(2), (*q)(4) = y(3);
    (*v)(0) = y(4), (*v)(1) = y(5), (*v)(3) = y(6), (*v)(4) = y(7);
  }
  SphereOnPlane sphere_;
  engine::SlidingFrictionView view_;
};

}  // namespace

PlanarContactBody::PlanarContactBody(const PlanarBodyParameters& p) : p_(p) {
  AddConstraintBlock(std::make_shared<LineContact>(p.R, p.mu));
}

void PlanarContactBody::MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const {
  *M = Eigen::Vector3d(p_.m, p_.m, p_.J).asDiagonal();
}

void PlanarContactBody::Forces(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& /*v*/,
                               Eigen::VectorXd* F) const {
  *F = Eigen::Vector3d(p_.m * kGravity * std::sin(p_.alpha) - p_.k * q(0),
                       -p_.m * kGravity * std::cos(p_.alpha), 0.0);
}

SphereOnPlane::SphereOnPlane(const SphereParameters& p) : p_(p) {
  AddConstraintBlock(std::make_shared<PlaneContact>(p.R, p.mu));
}

void SphereOnPlane::MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const {
  Eigen::VectorXd d(6);
  d << p_.m, p_.m, p_.m, p_.J(), p_.J(), p_.J();
  *M = d.asDiagonal();
}

void SphereOnPlane::Forces(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& /*v*/,
                           Eigen::VectorXd* F) const {
  F->setZero(6);
  (*F)(0) = p_.m * p_.g_x - p_.k * q(0);
  (*F)(1) = p_.m * p_.g_y - p_.k * q(1);
  (*F)(2) = -p_.m * p_.g_n;
}

engine::SlidingContact PlanarSlide(double mu, double s) {
  engine::SlidingContact c;
  c.normal_row = 0;
  c.mu = mu;
  c.mode = engine::SlipDirection::kFixed;
  c.direction = Eigen::VectorXd::Constant(1, s);
  return c;
}

engine::SlidingContact SpatialSlide(double mu, const Eigen::Vector2d& d0) {
  engine::SlidingContact c;
  c.normal_row = 0;
  c.mu = mu;
  c.mode = engine::SlipDirection::kCurrent;
  c.direction = d0;
  return c;
}

std::vector<std::string> FrictionProblemNames() {
  return {"sliding_spring", "rolling_spring", "sphere_turning"};
}

std::unique_ptr<test_problems::TestProblem> MakeFrictionProblem(const std::string& name) {
  if (name == "sliding_spring") return std::make_unique<SlidingSpringProblem>();
  if (name == "rolling_spring") return std::make_unique<RollingSpringProblem>();
  if (name == "sphere_turning") return std::make_unique<SphereTurningProblem>();
  throw std::invalid_argument("unknown friction problem '" + name + "'");
}

}  // namespace saltus::integrators::friction_problems
