#include "contact/joint_limits.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "engine/rotation.h"

namespace saltus::contact {

namespace {

using Eigen::Vector3d;

// Pose and world angular velocity of one side (the ground: identity, at rest).
struct Side {
  int body = engine::kGround;
  int v0 = 0;  // first entry of the body's (ṙ, ω) in v and a G row: SpatialModel::VOffset
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Vector3d r = Vector3d::Zero(), r_dot = Vector3d::Zero(), omega = Vector3d::Zero();
};

Side SideOf(const engine::SpatialModel& model, int body, const Eigen::VectorXd& q,
            const Eigen::VectorXd* v) {
  Side s;
  s.body = body;
  if (body == engine::kGround) return s;
  const int q0 = model.QOffset(body);
  s.v0 = model.VOffset(body);
  s.r = q.segment<3>(q0);
  s.R = engine::QuaternionToRotation(q.segment<4>(q0 + 3));
  if (v != nullptr) {
    s.r_dot = v->segment<3>(s.v0);
    s.omega = s.R * v->segment<3>(s.v0 + 3);
  }
  return s;
}

// Adds the world gradients (translation t, rotation w) of ẋ on one side to the row of ∂ẋ/∂v.
void AddGradient(const Side& s, const Vector3d& t, const Vector3d& w, Eigen::RowVectorXd* row) {
  if (row == nullptr || s.body == engine::kGround) return;
  row->segment<3>(s.v0) += t.transpose();
  row->segment<3>(s.v0 + 3) += (s.R.transpose() * w).transpose();
}

}  // namespace

JointLimits::JointLimits(std::shared_ptr<const engine::SpatialModel> model,
                         std::vector<JointLimit> limits)
    : model_(std::move(model)), limits_(std::move(limits)) {
  if (!model_) throw std::invalid_argument("JointLimits: null model");
  std::unordered_set<std::string> names;
  for (const JointLimit& l : limits_) {
    const auto fail = [&](const std::string& what) {
      throw std::invalid_argument("joint limit '" + l.name + "': " + what);
    };
    if (l.name.empty()) throw std::invalid_argument("joint limit: empty name");
    if (!names.insert(l.name).second) fail("duplicate name");
    if (l.joint < 0 || l.joint >= static_cast<int>(model_->joints().size())) {
      fail("joint index " + std::to_string(l.joint) + " is not a joint of the model");
    }
    const engine::SpatialJointType type = model_->joints()[static_cast<std::size_t>(l.joint)].type;
    const bool revolute = type == engine::SpatialJointType::kRevolute;
    if (!revolute && type != engine::SpatialJointType::kPrismatic) {
      fail("joint '" + model_->joints()[static_cast<std::size_t>(l.joint)].name +
           "' is neither revolute nor prismatic");
    }
    if (!std::isfinite(l.lower) || !std::isfinite(l.upper) || !(l.lower < l.upper)) {
      fail("needs finite lower < upper, got [" + std::to_string(l.lower) + ", " +
           std::to_string(l.upper) + "]");
    }
    if (revolute && (l.lower < -std::numbers::pi || l.upper > std::numbers::pi)) {
      fail("revolute limits must lie in [-pi, pi] (the joint angle is atan2-valued)");
    }
    if (std::isnan(l.restitution) || l.restitution > 1.0) {
      fail("restitution must be in [0, 1] (or negative for the global one)");
    }
    for (const char* side : {".lower", ".upper"}) {
      engine::ConstraintRowInfo info;
      info.kind = engine::ConstraintKind::kUnilateral;
      info.name = l.name + side;
      info.restitution = l.restitution;
      infos_.push_back(info);
    }
  }
}

void JointLimits::CheckSizes(const Eigen::VectorXd& q, const Eigen::VectorXd* v) const {
  if (q.size() != model_->num_q() || (v != nullptr && v->size() != model_->num_v())) {
    throw std::invalid_argument("JointLimits: q and v need " + std::to_string(model_->num_q()) +
                                " and " + std::to_string(model_->num_v()) +
                                " entries (7 and 6 per body)");
  }
}

JointLimits::Coordinate JointLimits::Evaluate(const Eigen::VectorXd& q, const Eigen::VectorXd* v,
                                              int i, Eigen::RowVectorXd* gradient) const {
  const JointLimit& l = limits_[static_cast<std::size_t>(i)];
  const engine::SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(l.joint)];
  const engine::JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(l.joint)];
  if (joint.node_a >= 0 || joint.node_b >= 0) return EvaluateAtNodes(q, v, l.joint, gradient);
  const Side a = SideOf(*model_, joint.body_a, q, v), b = SideOf(*model_, joint.body_b, q, v);
  Coordinate c;
  if (joint.type == engine::SpatialJointType::kRevolute) {
    const Vector3d x_a = a.R * f.axes_a.col(0), y_a = a.R * f.axes_a.col(1);
    const Vector3d x_b = b.R * f.axes_b.col(0);
    const double sigma = x_b.dot(y_a), kappa = x_b.dot(x_a), r2 = sigma * sigma + kappa * kappa;
    c.x = std::atan2(sigma, kappa);
    const Vector3d n = (kappa * x_b.cross(y_a) - sigma * x_b.cross(x_a)) / r2;
    AddGradient(b, Vector3d::Zero(), n, gradient);
    AddGradient(a, Vector3d::Zero(), -n, gradient);
    c.x_dot = (b.omega - a.omega).dot(n);
    const auto rate = [](const Vector3d& w, const Vector3d& u) { return Vector3d(w.cross(u)); };
    const Vector3d dx_b = rate(b.omega, x_b), dx_a = rate(a.omega, x_a), dy_a = rate(a.omega, y_a);
    const double sigma_dot = dx_b.dot(y_a) + x_b.dot(dy_a);
    const double kappa_dot = dx_b.dot(x_a) + x_b.dot(dx_a);
    const double sigma_ddot =
        rate(b.omega, dx_b).dot(y_a) + 2 * dx_b.dot(dy_a) + x_b.dot(rate(a.omega, dy_a));
    const double kappa_ddot =
        rate(b.omega, dx_b).dot(x_a) + 2 * dx_b.dot(dx_a) + x_b.dot(rate(a.omega, dx_a));
    c.x_ddot_free = (kappa * sigma_ddot - sigma * kappa_ddot) / r2 -
                    2 * c.x_dot * (kappa * kappa_dot + sigma * sigma_dot) / r2;
    return c;
  }
  const Vector3d z_a = a.R * f.axes_a.col(2);
  const Vector3d rho_a = a.R * f.point_a, rho_b = b.R * f.point_b;
  const Vector3d d = b.r + rho_b - a.r - rho_a;
  c.x = z_a.dot(d);
  AddGradient(b, z_a, rho_b.cross(z_a), gradient);
  AddGradient(a, -z_a, z_a.cross(d) - rho_a.cross(z_a), gradient);
  const Vector3d d_dot = b.r_dot + b.omega.cross(rho_b) - a.r_dot - a.omega.cross(rho_a);
  const Vector3d z_dot = a.omega.cross(z_a);
  c.x_dot = z_a.dot(d_dot) + z_dot.dot(d);
  const Vector3d d_ddot = b.omega.cross(b.omega.cross(rho_b)) - a.omega.cross(a.omega.cross(rho_a));
  c.x_ddot_free = z_a.dot(d_ddot) + 2 * z_dot.dot(d_dot) + a.omega.cross(z_dot).dot(d);
  return c;
}

JointLimits::Coordinate JointLimits::EvaluateAtNodes(const Eigen::VectorXd& q,
                                                     const Eigen::VectorXd* v, int joint,
                                                     Eigen::RowVectorXd* gradient) const {
  const engine::SpatialJointSide a = engine::JointSideOf(*model_, joint, false, q, v);
  const engine::SpatialJointSide b = engine::JointSideOf(*model_, joint, true, q, v);
  // A frame vector u: u̇ = Ω × u, ü_free = α × u + Ω × (Ω × u) (SpatialJointSide).
  const auto rate = [](const engine::SpatialJointSide& s, const Vector3d& u) {
    return Vector3d(s.omega.cross(u));
  };
  const auto acc = [](const engine::SpatialJointSide& s, const Vector3d& u) {
    return Vector3d(s.alpha.cross(u) + s.omega.cross(s.omega.cross(u)));
  };
  Coordinate c;
  if (model_->joints()[static_cast<std::size_t>(joint)].type ==
      engine::SpatialJointType::kRevolute) {
    const Vector3d x_a = a.axes.col(0), y_a = a.axes.col(1), x_b = b.axes.col(0);
    const double sigma = x_b.dot(y_a), kappa = x_b.dot(x_a), r2 = sigma * sigma + kappa * kappa;
    c.x = std::atan2(sigma, kappa);
    const Vector3d n = (kappa * x_b.cross(y_a) - sigma * x_b.cross(x_a)) / r2;
    if (gradient != nullptr) {
      b.AddRotationJacobian(n, *gradient);
      a.AddRotationJacobian(-n, *gradient);
    }
    c.x_dot = (b.omega - a.omega).dot(n);
    const Vector3d dx_b = rate(b, x_b), dx_a = rate(a, x_a), dy_a = rate(a, y_a);
    const double sigma_dot = dx_b.dot(y_a) + x_b.dot(dy_a);
    const double kappa_dot = dx_b.dot(x_a) + x_b.dot(dx_a);
    const double sigma_ddot = acc(b, x_b).dot(y_a) + 2 * dx_b.dot(dy_a) + x_b.dot(acc(a, y_a));
    const double kappa_ddot = acc(b, x_b).dot(x_a) + 2 * dx_b.dot(dx_a) + x_b.dot(acc(a, x_a));
    c.x_ddot_free = (kappa * sigma_ddot - sigma * kappa_ddot) / r2 -
                    2 * c.x_dot * (kappa * kappa_dot + sigma * sigma_dot) / r2;
    return c;
  }
  // Prismatic: s = z_a·d, ṡ = z_a·ḋ + (Ω_a × z_a)·d, so ∂ṡ/∂v = z_a·(∂ṗ_b − ∂ṗ_a) + (z_a × d)·∂Ω_a.
  const Vector3d z_a = a.axes.col(2);
  const Vector3d d = b.point - a.point;
  c.x = z_a.dot(d);
  if (gradient != nullptr) {
    b.AddPointJacobian(z_a, *gradient);
    a.AddPointJacobian(-z_a, *gradient);
    a.AddRotationJacobian(z_a.cross(d), *gradient);
  }
  const Vector3d d_dot = b.point_rate - a.point_rate;
  const Vector3d z_dot = rate(a, z_a);
  c.x_dot = z_a.dot(d_dot) + z_dot.dot(d);
  c.x_ddot_free = z_a.dot(b.point_acc - a.point_acc) + 2 * z_dot.dot(d_dot) + acc(a, z_a).dot(d);
  return c;
}

void JointLimits::Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                         Eigen::Ref<Eigen::VectorXd> g) const {
  CheckSizes(q, nullptr);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const JointLimit& l = limits_[static_cast<std::size_t>(rows[k] / 2)];
    const double x = Evaluate(q, nullptr, rows[k] / 2, nullptr).x;
    g(static_cast<Eigen::Index>(k)) = rows[k] % 2 == 0 ? x - l.lower : l.upper - x;
  }
}

void JointLimits::Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                           Eigen::Ref<Eigen::MatrixXd> G) const {
  CheckSizes(q, nullptr);
  Eigen::RowVectorXd gradient(G.cols());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    gradient.setZero();
    Evaluate(q, nullptr, rows[k] / 2, &gradient);
    G.row(static_cast<Eigen::Index>(k)) =
        rows[k] % 2 == 0 ? gradient : Eigen::RowVectorXd(-gradient);
  }
}

void JointLimits::Gamma(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const {
  CheckSizes(q, &v);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double x_ddot = Evaluate(q, &v, rows[k] / 2, nullptr).x_ddot_free;
    gamma(static_cast<Eigen::Index>(k)) = rows[k] % 2 == 0 ? x_ddot : -x_ddot;
  }
}

}  // namespace saltus::contact
