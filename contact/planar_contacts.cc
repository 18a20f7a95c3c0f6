#include "contact/planar_contacts.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace saltus::contact {
namespace {

// Rotation by π/2: J x = (−x₂, x₁).
Eigen::Vector2d Perp(const Eigen::Vector2d& x) { return {-x.y(), x.x()}; }

Eigen::Matrix2d Rotation(double theta) {
  const double c = std::cos(theta), s = std::sin(theta);
  Eigen::Matrix2d R;
  R << c, -s, s, c;
  return R;
}

// Pose and velocity of one side of a contact. The ground is fixed: identity pose, zero velocity.
struct BodyFrame {
  Eigen::Vector2d r = Eigen::Vector2d::Zero();
  Eigen::Vector2d r_dot = Eigen::Vector2d::Zero();
  Eigen::Matrix2d R = Eigen::Matrix2d::Identity();
  double omega = 0.0;
};

BodyFrame Frame(int body, const Eigen::VectorXd& q) {
  BodyFrame f;
  if (body == engine::kGround) return f;
  f.r = q.segment<2>(3 * body);
  f.R = Rotation(q(3 * body + 2));
  return f;
}

BodyFrame Frame(int body, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  BodyFrame f = Frame(body, q);
  if (body == engine::kGround) return f;
  f.r_dot = v.segment<2>(3 * body);
  f.omega = v(3 * body + 2);
  return f;
}

std::string Label(const PlanarContact& c, std::size_t index) {
  return "contact '" + c.name + "' (#" + std::to_string(index) + ")";
}

bool IsFinite(const Eigen::Vector2d& x) { return x.allFinite(); }

// Writes the 1 × 3 Jacobian block of `body` (nothing for the ground).
void AddBlock(int body, const Eigen::Vector2d& n, double angular, Eigen::Ref<Eigen::MatrixXd> G,
              Eigen::Index row) {
  if (body == engine::kGround) return;
  G(row, 3 * body) += n.x();
  G(row, 3 * body + 1) += n.y();
  G(row, 3 * body + 2) += angular;
}

}  // namespace

PlanarContacts::PlanarContacts(std::shared_ptr<const engine::PlanarModel> model,
                               std::vector<PlanarContact> contacts)
    : model_(std::move(model)), contacts_(std::move(contacts)) {
  if (!model_) throw std::invalid_argument("PlanarContacts: null model");
  const int nb = model_->num_bodies();
  std::unordered_set<std::string> names;
  infos_.reserve(contacts_.size());
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    PlanarContact& c = contacts_[i];
    const std::string label = Label(c, i);
    const auto fail = [&](const std::string& what) {
      throw std::invalid_argument("PlanarContacts: " + label + ": " + what);
    };
    if (c.name.empty()) fail("name must not be empty");
    if (!names.insert(c.name).second) fail("duplicate name");
    const auto check_body = [&](int body, const char* which) {
      if (body != engine::kGround && (body < 0 || body >= nb)) {
        fail(std::string(which) + " " + std::to_string(body) + " is not a body of the model (" +
             std::to_string(nb) + " bodies) nor the ground");
      }
    };
    check_body(c.body_a, "body_a");
    check_body(c.body_b, "body_b");
    if (c.body_a == c.body_b) {
      fail(c.body_a == engine::kGround ? "body_a and body_b are both the ground"
                                       : "body_a and body_b are the same body");
    }
    if (!IsFinite(c.point_a) || !IsFinite(c.point_b) || !IsFinite(c.normal_a) ||
        !std::isfinite(c.radius_a) || !std::isfinite(c.radius_b)) {
      fail("non-finite geometry");
    }
    if (c.radius_a < 0.0) fail("radius_a must be >= 0, got " + std::to_string(c.radius_a));
    if (c.radius_b < 0.0) fail("radius_b must be >= 0, got " + std::to_string(c.radius_b));
    switch (c.type) {
      case PlanarContactType::kPointLine:
      case PlanarContactType::kDiskLine: {
        const double norm = c.normal_a.norm();
        if (!(norm > 1e-12)) fail("line normal must be non-zero");
        c.normal_a /= norm;
        if (c.type == PlanarContactType::kDiskLine && !(c.radius_b > 0.0)) {
          fail("disk radius_b must be > 0, got " + std::to_string(c.radius_b));
        }
        break;
      }
      case PlanarContactType::kDiskDisk:
        if (!(c.radius_a > 0.0))
          fail("disk radius_a must be > 0, got " + std::to_string(c.radius_a));
        if (!(c.radius_b > 0.0))
          fail("disk radius_b must be > 0, got " + std::to_string(c.radius_b));
        break;
      default:
        fail("unknown contact type");
    }
    if (std::isnan(c.restitution) || c.restitution > 1.0) {
      fail("restitution must be in [0, 1] (or negative for the global one), got " +
           std::to_string(c.restitution));
    }
    engine::ConstraintRowInfo info;
    info.kind = engine::ConstraintKind::kUnilateral;
    info.name = c.name;
    info.restitution = c.restitution < 0.0 ? -1.0 : c.restitution;
    infos_.push_back(std::move(info));
  }
}

namespace {

void CheckSize(const char* what, const Eigen::VectorXd& x, int nb) {
  if (x.size() != 3 * nb) {
    throw std::invalid_argument(std::string("PlanarContacts: ") + what + " has " +
                                std::to_string(x.size()) + " entries, expected " +
                                std::to_string(3 * nb) + " (3 per body)");
  }
}

// World-frame geometry of one contact at q.
struct Geometry {
  BodyFrame a, b;
  Eigen::Vector2d rho_a, rho_b;  // rotated points: line point or disk-a centre, point or disk b
  Eigen::Vector2d p_a, p_b;      // world points
  Eigen::Vector2d n;             // world normal (lines: R_a n_a; disks: (p_b − p_a)/‖·‖)
  double distance = 0.0;         // disks: ‖p_b − p_a‖
};

Geometry Evaluate(const PlanarContact& c, BodyFrame a, BodyFrame b) {
  Geometry geo;
  geo.a = a;
  geo.b = b;
  geo.rho_a = a.R * c.point_a;
  geo.rho_b = b.R * c.point_b;
  geo.p_a = a.r + geo.rho_a;
  geo.p_b = b.r + geo.rho_b;
  if (c.type == PlanarContactType::kDiskDisk) {
    const Eigen::Vector2d d = geo.p_b - geo.p_a;
    geo.distance = d.norm();
    geo.n = geo.distance > 0.0
                ? Eigen::Vector2d(d / geo.distance)
                : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
  } else {
    geo.n = a.R * c.normal_a;
  }
  return geo;
}

}  // namespace

void PlanarContacts::Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                            Eigen::Ref<Eigen::VectorXd> g) const {
  CheckSize("q", q, model_->num_bodies());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const PlanarContact& c = contacts_[rows[k]];
    const Geometry geo = Evaluate(c, Frame(c.body_a, q), Frame(c.body_b, q));
    const auto i = static_cast<Eigen::Index>(k);
    switch (c.type) {
      case PlanarContactType::kPointLine:
        g(i) = geo.n.dot(geo.p_b - geo.p_a);
        break;
      case PlanarContactType::kDiskLine:
        g(i) = geo.n.dot(geo.p_b - geo.p_a) - c.radius_b;
        break;
      case PlanarContactType::kDiskDisk:
        g(i) = geo.distance - c.radius_a - c.radius_b;
        break;
    }
  }
}

ContactSite PlanarContacts::Site(const Eigen::VectorXd& q, int i) const {
  CheckSize("q", q, model_->num_bodies());
  const PlanarContact& c = contacts_.at(static_cast<std::size_t>(i));
  const Geometry geo = Evaluate(c, Frame(c.body_a, q), Frame(c.body_b, q));
  Eigen::Vector2d witness_a, witness_b;
  if (c.type == PlanarContactType::kDiskDisk) {
    witness_a = geo.p_a + c.radius_a * geo.n;
    witness_b = geo.p_b - c.radius_b * geo.n;
  } else {
    witness_b = geo.p_b - (c.type == PlanarContactType::kDiskLine ? c.radius_b : 0.0) * geo.n;
    witness_a = geo.p_b - geo.n.dot(geo.p_b - geo.p_a) * geo.n;  // foot on the line
  }
  ContactSite site;
  site.point << 0.5 * (witness_a + witness_b), 0.0;
  site.normal << geo.n, 0.0;
  site.body_a = c.body_a;
  site.body_b = c.body_b;
  site.column_a = c.body_a == engine::kGround ? -1 : 3 * c.body_a;
  site.column_b = c.body_b == engine::kGround ? -1 : 3 * c.body_b;
  return site;
}

void PlanarContacts::Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                              Eigen::Ref<Eigen::MatrixXd> G) const {
  CheckSize("q", q, model_->num_bodies());
  G.setZero();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const PlanarContact& c = contacts_[rows[k]];
    const Geometry geo = Evaluate(c, Frame(c.body_a, q), Frame(c.body_b, q));
    const auto i = static_cast<Eigen::Index>(k);
    const Eigen::Vector2d& n = geo.n;
    if (c.type == PlanarContactType::kDiskDisk) {
      AddBlock(c.body_b, n, n.dot(Perp(geo.rho_b)), G, i);
      AddBlock(c.body_a, -n, -n.dot(Perp(geo.rho_a)), G, i);
    } else {
      AddBlock(c.body_b, n, n.dot(Perp(geo.rho_b)), G, i);
      AddBlock(c.body_a, -n, Perp(n).dot(geo.p_b - geo.a.r), G, i);
    }
  }
}

void PlanarContacts::Gamma(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                           std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const {
  CheckSize("q", q, model_->num_bodies());
  CheckSize("v", v, model_->num_bodies());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const PlanarContact& c = contacts_[rows[k]];
    const Geometry geo = Evaluate(c, Frame(c.body_a, q, v), Frame(c.body_b, q, v));
    const auto i = static_cast<Eigen::Index>(k);
    const double w_a = geo.a.omega, w_b = geo.b.omega;
    // Velocities of the two points: ṗ = ṙ + ω J ρ.
    const Eigen::Vector2d pdot_a = geo.a.r_dot + w_a * Perp(geo.rho_a);
    const Eigen::Vector2d pdot_b = geo.b.r_dot + w_b * Perp(geo.rho_b);
    const Eigen::Vector2d& n = geo.n;
    if (c.type == PlanarContactType::kDiskDisk) {
      const Eigen::Vector2d d_dot = pdot_b - pdot_a;
      const double nd = n.dot(d_dot);
      gamma(i) = n.dot(w_a * w_a * geo.rho_a - w_b * w_b * geo.rho_b) +
                 (d_dot.squaredNorm() - nd * nd) / geo.distance;
    } else {
      // g = n·(p_b − c) with ṅ = ω_a J n: the centripetal terms of p_b, c and n, plus the
      // Coriolis-like cross term 2 ṅ·(ṗ_b − ċ).
      gamma(i) = 2.0 * w_a * Perp(n).dot(pdot_b - pdot_a) - w_b * w_b * n.dot(geo.rho_b) +
                 w_a * w_a * n.dot(geo.rho_a) - w_a * w_a * n.dot(geo.p_b - geo.p_a);
    }
  }
}

}  // namespace saltus::contact
