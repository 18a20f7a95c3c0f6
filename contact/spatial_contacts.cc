#include "contact/spatial_contacts.h"

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>

#include "engine/rotation.h"

namespace saltus::contact {

using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

namespace {

std::string PairLabel(const SpatialContactPair& p) { return "contact pair '" + p.name + "'"; }

// Which closed form γ has (see the header).
enum class GammaForm { kPlanePoint, kSphereSphere, kDifference };

bool IsPlane(const Shape& s) { return s.type() == ShapeType::kPlane; }

GammaForm FormOf(const ContactManifold& m, int feature) {
  const FeatureKind k = m.feature(feature).kind;
  if (k == FeatureKind::kPlaneVertex || k == FeatureKind::kPlaneEndBall) {
    return GammaForm::kPlanePoint;
  }
  if (k == FeatureKind::kSignedDistance) {
    const ShapeType a = m.shape_a().type(), b = m.shape_b().type();
    if (a == ShapeType::kSphere && b == ShapeType::kSphere) return GammaForm::kSphereSphere;
    if ((a == ShapeType::kPlane && b == ShapeType::kSphere) ||
        (a == ShapeType::kSphere && b == ShapeType::kPlane)) {
      return GammaForm::kPlanePoint;
    }
  }
  return GammaForm::kDifference;
}

// World-frame kinematics of one body (all zero for the ground).
struct BodyMotion {
  Vector3d r = Vector3d::Zero();
  Vector3d r_dot = Vector3d::Zero();
  Vector3d omega = Vector3d::Zero();  // world frame
  Vector3d Velocity(const Vector3d& x) const { return r_dot + omega.cross(x - r); }
  // v̇-free acceleration of the material point at x.
  Vector3d Acceleration(const Vector3d& x) const { return omega.cross(omega.cross(x - r)); }
};

}  // namespace

SpatialContacts::SpatialContacts(std::shared_ptr<const engine::SpatialModel> model,
                                 std::vector<SpatialContactPair> pairs, DistanceOptions options)
    : model_(std::move(model)), pairs_(std::move(pairs)) {
  if (!model_) throw std::invalid_argument("SpatialContacts: null model");
  const int nb = model_->num_bodies();
  std::set<std::string> names;
  manifolds_.reserve(pairs_.size());
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    const SpatialContactPair& pair = pairs_[p];
    const std::string label = PairLabel(pair);
    if (pair.name.empty()) {
      throw std::invalid_argument("contact pair #" + std::to_string(p) + ": empty name");
    }
    if (!names.insert(pair.name).second) throw std::invalid_argument(label + ": duplicate name");
    for (int body : {pair.body_a, pair.body_b}) {
      if (body != engine::kGround && (body < 0 || body >= nb)) {
        throw std::invalid_argument(label + ": unknown body index " + std::to_string(body));
      }
    }
    if (pair.body_a == pair.body_b) {
      throw std::invalid_argument(label + (pair.body_a == engine::kGround
                                               ? ": both shapes on the ground"
                                               : ": both shapes on the same body"));
    }
    if (!std::isfinite(pair.restitution) || pair.restitution > 1.0) {
      throw std::invalid_argument(label + ": restitution must be in [0, 1] (negative: global)");
    }
    try {
      manifolds_.emplace_back(pair.shape_a, pair.shape_b, options);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(label + ": " + e.what());
    }
    const ContactManifold& m = manifolds_.back();
    for (int k = 0; k < m.num_features(); ++k) {
      engine::ConstraintRowInfo info;
      info.kind = engine::ConstraintKind::kUnilateral;
      info.name = m.num_features() == 1 ? pair.name : pair.name + "." + std::to_string(k);
      info.restitution = pair.restitution;
      infos_.push_back(std::move(info));
      row_pair_.push_back(static_cast<int>(p));
      row_feature_.push_back(k);
    }
  }
}

void SpatialContacts::CheckSizes(const VectorXd& q, const VectorXd* v, const char* where) const {
  const int nb = model_->num_bodies();
  if (q.size() != 7 * nb) {
    throw std::invalid_argument(std::string("SpatialContacts::") + where + ": q has " +
                                std::to_string(q.size()) + " entries, expected " +
                                std::to_string(7 * nb));
  }
  if (v != nullptr && v->size() != 6 * nb) {
    throw std::invalid_argument(std::string("SpatialContacts::") + where + ": v has " +
                                std::to_string(v->size()) + " entries, expected " +
                                std::to_string(6 * nb));
  }
}

Isometry3d SpatialContacts::BodyPose(const VectorXd& q, int body) const {
  Isometry3d X = Isometry3d::Identity();
  if (body == engine::kGround) return X;
  X.linear() = engine::QuaternionToRotation(q.segment<4>(7 * body + 3));
  X.translation() = q.segment<3>(7 * body);
  return X;
}

PairDistance SpatialContacts::Evaluate(const VectorXd& q, int row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  return manifolds_[static_cast<std::size_t>(RowPair(row))].Evaluate(
      RowFeature(row), BodyPose(q, pair.body_a), BodyPose(q, pair.body_b));
}

bool SpatialContacts::HasAnalyticGamma(int row) const {
  return FormOf(manifolds_[static_cast<std::size_t>(RowPair(row))], RowFeature(row)) !=
         GammaForm::kDifference;
}

void SpatialContacts::Values(double t, const VectorXd& q, std::span<const int> rows,
                             Eigen::Ref<VectorXd> g) const {
  (void)t;
  CheckSizes(q, nullptr, "Values");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    g[static_cast<Eigen::Index>(i)] = Evaluate(q, rows[i]).gap;
  }
}

void SpatialContacts::JacobianRow(
    const VectorXd& q, int row, Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> out) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  const PairDistance d = Evaluate(q, row);
  const auto add = [&](int body, const Vector3d& p, double sign) {
    if (body == engine::kGround) return;
    const Isometry3d X = BodyPose(q, body);
    const Matrix3d& R = X.linear();
    const Vector3d s = R.transpose() * (p - X.translation());
    out.segment<3>(6 * body) += sign * d.normal.transpose();
    out.segment<3>(6 * body + 3) += sign * s.cross(R.transpose() * d.normal).transpose();
  };
  add(pair.body_a, d.point_a, -1.0);
  add(pair.body_b, d.point_b, 1.0);
}

void SpatialContacts::Jacobian(double t, const VectorXd& q, std::span<const int> rows,
                               Eigen::Ref<Eigen::MatrixXd> G) const {
  (void)t;
  CheckSizes(q, nullptr, "Jacobian");
  G.setZero();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    JacobianRow(q, rows[i], G.row(static_cast<Eigen::Index>(i)));
  }
}

double SpatialContacts::AnalyticGamma(const VectorXd& q, const VectorXd& v, int row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  const ContactManifold& m = manifolds_[static_cast<std::size_t>(RowPair(row))];
  const PairDistance d = Evaluate(q, row);
  const auto motion = [&](int body) {
    BodyMotion b;
    if (body == engine::kGround) return b;
    b.r = q.segment<3>(7 * body);
    const Matrix3d R = engine::QuaternionToRotation(q.segment<4>(7 * body + 3));
    b.r_dot = v.segment<3>(6 * body);
    b.omega = R * v.segment<3>(6 * body + 3);
    return b;
  };
  const BodyMotion a = motion(pair.body_a), b = motion(pair.body_b);
  if (FormOf(m, RowFeature(row)) == GammaForm::kSphereSphere) {
    const Vector3d c_a = BodyPose(q, pair.body_a) * m.shape_a().pose().translation();
    const Vector3d c_b = BodyPose(q, pair.body_b) * m.shape_b().pose().translation();
    const Vector3d dist = c_b - c_a;
    const double len = dist.norm();
    const Vector3d n = dist / len;
    const Vector3d d_dot = b.Velocity(c_b) - a.Velocity(c_a);
    const Vector3d d_ddot = b.Acceleration(c_b) - a.Acceleration(c_a);
    const double nd = n.dot(d_dot);
    return n.dot(d_ddot) + (d_dot.squaredNorm() - nd * nd) / len;
  }
  // Plane–point: the convex side's body-fixed point is the vertex or the ball centre.
  const bool plane_is_a = IsPlane(m.shape_a());
  const Shape& convex = plane_is_a ? m.shape_b() : m.shape_a();
  const double rho =
      m.feature(RowFeature(row)).kind == FeatureKind::kPlaneVertex ? 0.0 : convex.radius();
  const Vector3d& n = d.normal;
  Vector3d x_a = d.point_a, x_b = d.point_b;
  if (plane_is_a) {
    x_b += rho * n;
  } else {
    x_a -= rho * n;
  }
  const Vector3d omega_p = plane_is_a ? a.omega : b.omega;
  const Vector3d dist = x_b - x_a;
  const Vector3d d_dot = b.Velocity(x_b) - a.Velocity(x_a);
  const Vector3d d_ddot = b.Acceleration(x_b) - a.Acceleration(x_a);
  const Vector3d n_dot = omega_p.cross(n);
  const Vector3d n_ddot = omega_p.cross(n_dot);
  return n_ddot.dot(dist) + 2.0 * n_dot.dot(d_dot) + n.dot(d_ddot);
}

double SpatialContacts::DifferenceGamma(const VectorXd& q, const VectorXd& v, int row) const {
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(row))];
  double speed = 1.0;
  for (int body : {pair.body_a, pair.body_b}) {
    if (body != engine::kGround)
      speed = std::max(speed, v.segment<6>(6 * body).lpNorm<Eigen::Infinity>());
  }
  const double eps = std::cbrt(std::numeric_limits<double>::epsilon()) / speed;
  // q ⊕ ε v on the two bodies only (the row depends on nothing else).
  const auto shifted = [&](double h) {
    VectorXd q_h = q;
    for (int body : {pair.body_a, pair.body_b}) {
      if (body == engine::kGround) continue;
      q_h.segment<3>(7 * body) += h * v.segment<3>(6 * body);
      q_h.segment<4>(7 * body + 3) = engine::QuaternionMultiply(
          q.segment<4>(7 * body + 3), engine::QuaternionExp(h * v.segment<3>(6 * body + 3)));
    }
    return q_h;
  };
  Eigen::RowVectorXd G_plus = Eigen::RowVectorXd::Zero(v.size());
  Eigen::RowVectorXd G_minus = Eigen::RowVectorXd::Zero(v.size());
  JacobianRow(shifted(eps), row, G_plus);
  JacobianRow(shifted(-eps), row, G_minus);
  return (G_plus - G_minus).dot(v) / (2.0 * eps);
}

void SpatialContacts::Gamma(double t, const VectorXd& q, const VectorXd& v,
                            std::span<const int> rows, Eigen::Ref<VectorXd> gamma) const {
  (void)t;
  CheckSizes(q, &v, "Gamma");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    gamma[static_cast<Eigen::Index>(i)] =
        HasAnalyticGamma(rows[i]) ? AnalyticGamma(q, v, rows[i]) : DifferenceGamma(q, v, rows[i]);
  }
}

}  // namespace saltus::contact
