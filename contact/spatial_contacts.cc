#include "contact/spatial_contacts.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "engine/block_sparse.h"
#include "engine/rotation.h"

namespace saltus::contact {

using Eigen::Isometry3d;
using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::VectorXd;

namespace {

std::string PairLabel(const SpatialContactPair& p) { return "contact pair '" + p.name + "'"; }

// Which closed form γ has (see the header).
enum class GammaForm { kPlanePoint, kSphereSphere, kPlaneRim, kBoxCorner, kDifference };

bool IsPlane(const Shape& s) { return s.type() == ShapeType::kPlane; }

GammaForm FormOf(const ContactManifold& m, int feature) {
  const FeatureKind k = m.feature(feature).kind;
  if (k == FeatureKind::kPlaneVertex || k == FeatureKind::kPlaneEndBall) {
    return GammaForm::kPlanePoint;
  }
  if (k == FeatureKind::kPlaneRim) return GammaForm::kPlaneRim;
  if (k == FeatureKind::kBoxCornerOfA || k == FeatureKind::kBoxCornerOfB) {
    return GammaForm::kBoxCorner;
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
    pair_first_row_.push_back(static_cast<int>(infos_.size()));
    pair_num_rows_.push_back(m.num_features());
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

  // Broadphase proxies: one per distinct (body, shape bounds) among the pairs' sides.
  broadphase_ = std::make_unique<Broadphase>(0.0);
  broadphase_mutex_ = std::make_unique<std::mutex>();
  std::map<std::vector<double>, int> proxy_of_key;
  const auto proxy_of = [&](int body, const Shape& shape) {
    std::vector<double> key{static_cast<double>(body), static_cast<double>(shape.type())};
    const Eigen::Matrix<double, 3, 4> pose = shape.pose().matrix().topRows<3>();
    key.insert(key.end(), pose.data(), pose.data() + 12);
    if (IsPlane(shape)) {
      const Vector3d& n = shape.plane_normal();
      key.insert(key.end(), {n.x(), n.y(), n.z(), shape.plane_offset()});
    } else {
      const Eigen::AlignedBox3d box = shape.LocalAabb();
      key.insert(key.end(), {box.min().x(), box.min().y(), box.min().z(), box.max().x(),
                             box.max().y(), box.max().z(), shape.BoundingRadius()});
    }
    const auto [it, added] = proxy_of_key.emplace(std::move(key), num_proxies());
    if (added) {
      broadphase_->Add(shape, body == engine::kGround ? kStaticBody : body);
      proxy_body_.push_back(body);
      proxy_rho_.push_back(
          IsPlane(shape) ? 0.0 : shape.pose().translation().norm() + shape.BoundingRadius());
    }
    return it->second;
  };
  for (std::size_t p = 0; p < pairs_.size(); ++p) {
    // A plane carried by a moving body sweeps unboundedly far when it turns: always a candidate.
    if ((IsPlane(pairs_[p].shape_a) && pairs_[p].body_a != engine::kGround) ||
        (IsPlane(pairs_[p].shape_b) && pairs_[p].body_b != engine::kGround)) {
      always_pairs_.push_back(static_cast<int>(p));
      continue;
    }
    const int a = proxy_of(pairs_[p].body_a, pairs_[p].shape_a);
    const int b = proxy_of(pairs_[p].body_b, pairs_[p].shape_b);
    const auto lo = static_cast<unsigned long long>(std::min(a, b));
    const auto hi = static_cast<unsigned long long>(std::max(a, b));
    pairs_of_proxies_[(lo << 32) | hi].push_back(static_cast<int>(p));
  }
}

void SpatialContacts::CandidateRows(const VectorXd& q, const VectorXd& speed_bound, double horizon,
                                    double margin, std::vector<int>* rows) const {
  CheckSizes(q, &speed_bound, "CandidateRows");
  if (!(horizon >= 0.0) || !(margin >= 0.0) || !std::isfinite(horizon) || !std::isfinite(margin)) {
    throw std::invalid_argument(
        "SpatialContacts::CandidateRows: horizon and margin must be "
        "finite and >= 0");
  }
  rows->clear();
  const std::lock_guard<std::mutex> lock(*broadphase_mutex_);
  for (int i = 0; i < num_proxies(); ++i) {
    const int body = proxy_body_[static_cast<std::size_t>(i)];
    double reach = 0.0;
    if (body != engine::kGround) {
      reach = horizon * (speed_bound.segment<3>(6 * body).norm() +
                         proxy_rho_[static_cast<std::size_t>(i)] *
                             speed_bound.segment<3>(6 * body + 3).norm());
    }
    // Each side grows by m/2 + δ: pairs within m + δ_a + δ_b (broadphase.h).
    broadphase_->SetBodyPose(i, BodyPose(q, body), 0.5 * margin + reach);
  }
  for (int p : always_pairs_) {
    const auto pp = static_cast<std::size_t>(p);
    for (int k = 0; k < pair_num_rows_[pp]; ++k) rows->push_back(pair_first_row_[pp] + k);
  }
  for (const auto& [a, b] : broadphase_->CandidatePairs()) {
    const auto key =
        (static_cast<unsigned long long>(a) << 32) | static_cast<unsigned long long>(b);
    const auto it = pairs_of_proxies_.find(key);
    if (it == pairs_of_proxies_.end()) continue;
    for (int p : it->second) {
      const auto pp = static_cast<std::size_t>(p);
      for (int k = 0; k < pair_num_rows_[pp]; ++k) rows->push_back(pair_first_row_[pp] + k);
    }
  }
  std::sort(rows->begin(), rows->end());
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

bool SpatialContacts::AppendJacobianBlocks(double t, const VectorXd& q, int local_row,
                                           engine::BlockSparseRows* G) const {
  (void)t;
  if (G->block_size != 6) return false;
  CheckSizes(q, nullptr, "AppendJacobianBlocks");
  const SpatialContactPair& pair = pairs_[static_cast<std::size_t>(RowPair(local_row))];
  const PairDistance d = Evaluate(q, local_row);
  // Same entries as JacobianRow: −n, −s_a × (Rᵀn) on body a; +n, s_b × (Rᵀn) on body b.
  const auto block = [&](int body, const Vector3d& p, double sign, double* out) {
    const Isometry3d X = BodyPose(q, body);
    const Matrix3d& R = X.linear();
    const Vector3d s = R.transpose() * (p - X.translation());
    const Vector3d rot = s.cross(R.transpose() * d.normal);
    for (int j = 0; j < 3; ++j) {
      out[j] += sign * d.normal[j];
      out[3 + j] += sign * rot[j];
    }
  };
  int body[2] = {pair.body_a, pair.body_b};
  const Vector3d* point[2] = {&d.point_a, &d.point_b};
  double sign[2] = {-1.0, 1.0};
  if (body[1] != engine::kGround && (body[0] == engine::kGround || body[1] < body[0])) {
    std::swap(body[0], body[1]);
    std::swap(point[0], point[1]);
    std::swap(sign[0], sign[1]);
  }
  double* last = nullptr;
  for (int k = 0; k < 2; ++k) {
    if (body[k] == engine::kGround) continue;
    // Both sides on one body (never a pair of the default filter): one block holding the sum.
    double* out = (k == 1 && body[1] == body[0]) ? last : G->AddBlock(body[k]);
    block(body[k], *point[k], sign[k], out);
    last = out;
  }
  G->EndRow();
  return true;
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
  const GammaForm form = FormOf(m, RowFeature(row));
  // wd: relative position of the two material witness points and its v̇-free derivatives.
  const Vector3d wd = d.point_b - d.point_a;
  const Vector3d wd_dot = b.Velocity(d.point_b) - a.Velocity(d.point_a);
  const Vector3d wd_ddot = b.Acceleration(d.point_b) - a.Acceleration(d.point_a);
  if (form == GammaForm::kBoxCorner) {
    // The corner lies in the face, edge or vertex Voronoi region of the other box K according
    // to how many of its box-frame coordinates exceed the half sizes (inside: nearest face).
    const bool box_is_a = m.feature(RowFeature(row)).kind == FeatureKind::kBoxCornerOfB;
    const Shape& box = box_is_a ? m.shape_a() : m.shape_b();
    const Isometry3d X_k = BodyPose(q, box_is_a ? pair.body_a : pair.body_b) * box.pose();
    const Vector3d corner = box_is_a ? d.point_b : d.point_a;
    const Vector3d local = X_k.inverse() * corner;
    int outside = 0, inside_axis = 0;
    for (int j = 0; j < 3; ++j) {
      if (std::abs(local[j]) > box.half_size()[j]) {
        ++outside;
      } else {
        inside_axis = j;
      }
    }
    const Vector3d omega_k = box_is_a ? a.omega : b.omega;
    // Touching an edge or a vertex exactly (gap 0 there): the normal is not defined.
    if (outside >= 2 && !(wd.norm() > 0.0)) return DifferenceGamma(q, v, row);
    if (outside <= 1) {
      // Vertex–face: g = n·(x_b − x_a) with n fixed in K (the plane–point form, ρ = 0).
      const Vector3d n_dot = omega_k.cross(d.normal);
      return omega_k.cross(n_dot).dot(wd) + 2.0 * n_dot.dot(wd_dot) + d.normal.dot(wd_ddot);
    }
    if (outside == 3) {
      // Vertex–vertex: g = ‖x_b − x_a‖, two material points (the point–point form).
      const double nd = d.normal.dot(wd_dot);
      return d.normal.dot(wd_ddot) + (wd_dot.squaredNorm() - nd * nd) / wd.norm();
    }
    // Vertex–edge: g = ‖u‖, u = d − (d·e) e with the edge direction e fixed in K:
    //   u̇ = ḋ − (ḋ·e + d·ė) e − (d·e) ė,
    //   ü = d̈ − (d̈·e + 2 ḋ·ė + d·ë) e − 2 (ḋ·e + d·ė) ė − (d·e) ë,
    //   g̈ = m·ü + (‖u̇‖² − (m·u̇)²)/‖u‖,  m = u/‖u‖ (= n),  ė = ω_K × e, ë = ω_K × ė.
    const Vector3d e = X_k.linear().col(inside_axis);
    const Vector3d e_dot = omega_k.cross(e), e_ddot = omega_k.cross(e_dot);
    const double de = wd.dot(e), de_dot = wd_dot.dot(e) + wd.dot(e_dot);
    const Vector3d u = wd - de * e;
    const Vector3d u_dot = wd_dot - de_dot * e - de * e_dot;
    const Vector3d u_ddot = wd_ddot -
                            (wd_ddot.dot(e) + 2.0 * wd_dot.dot(e_dot) + wd.dot(e_ddot)) * e -
                            2.0 * de_dot * e_dot - de * e_ddot;
    const double len = u.norm();
    const Vector3d mu = u / len;
    const double mu_dot = mu.dot(u_dot);
    return mu.dot(u_ddot) + (u_dot.squaredNorm() - mu_dot * mu_dot) / len;
  }
  if (form == GammaForm::kPlaneRim) {
    // g = n·(x_b − x_a) − r s with x the rim circle's centre c on the cylinder side and a point
    // of the plane on the other, s = √(1 − μ²), μ = n·e (e the cylinder axis, fixed in C):
    //   ṡ = −μ μ̇/s,  s̈ = −μ̇²/s³ − μ μ̈/s,  μ̇ = ṅ·e + n·ė,  μ̈ = n̈·e + 2 ṅ·ė + n·ë,
    //   γ = [plane–point γ of c] − r s̈.
    const bool plane_is_a = IsPlane(m.shape_a());
    const Shape& cylinder = plane_is_a ? m.shape_b() : m.shape_a();
    const Isometry3d X_c = BodyPose(q, plane_is_a ? pair.body_b : pair.body_a) * cylinder.pose();
    const double end = m.feature(RowFeature(row)).index == 0 ? -0.5 : 0.5;
    const Vector3d c = X_c * Vector3d(0.0, 0.0, end * cylinder.length());
    const Vector3d e = X_c.linear().col(2);
    const Vector3d& n = d.normal;
    const double mu = n.dot(e);
    const double s = std::sqrt(std::max(0.0, 1.0 - mu * mu));
    // n ∥ e (standing on an end): the gap is not differentiable there (contact_manifold.h).
    if (!(s > 1e-8)) return DifferenceGamma(q, v, row);
    const BodyMotion& p_side = plane_is_a ? a : b;
    const BodyMotion& c_side = plane_is_a ? b : a;
    const Vector3d x_p = plane_is_a ? d.point_a : d.point_b;
    const double sign = plane_is_a ? 1.0 : -1.0;  // x_b − x_a = sign (c − x_p)
    const Vector3d rel = sign * (c - x_p);
    const Vector3d rel_dot = sign * (c_side.Velocity(c) - p_side.Velocity(x_p));
    const Vector3d rel_ddot = sign * (c_side.Acceleration(c) - p_side.Acceleration(x_p));
    const Vector3d n_dot = p_side.omega.cross(n), n_ddot = p_side.omega.cross(n_dot);
    const Vector3d e_dot = c_side.omega.cross(e), e_ddot = c_side.omega.cross(e_dot);
    const double mu_dot = n_dot.dot(e) + n.dot(e_dot);
    const double mu_ddot = n_ddot.dot(e) + 2.0 * n_dot.dot(e_dot) + n.dot(e_ddot);
    const double s_ddot = -mu_dot * mu_dot / (s * s * s) - mu * mu_ddot / s;
    return n_ddot.dot(rel) + 2.0 * n_dot.dot(rel_dot) + n.dot(rel_ddot) -
           cylinder.radius() * s_ddot;
  }
  if (form == GammaForm::kSphereSphere) {
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
