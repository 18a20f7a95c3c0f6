#include "contact/planar_contacts.h"

#include <algorithm>
#include <atomic>
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
  int column = -1;  // the body's first column in q and v; −1 for the ground
};

BodyFrame Frame(const engine::PlanarModel& model, int body, const Eigen::VectorXd& q) {
  BodyFrame f;
  if (body == engine::kGround) return f;
  f.column = model.Offset(body);
  f.r = q.segment<2>(f.column);
  f.R = Rotation(q(f.column + 2));
  return f;
}

// The velocity of a frame at v (its pose is already set).
void SetFrameVelocity(const Eigen::VectorXd& v, BodyFrame* f) {
  if (f->column < 0) return;
  f->r_dot = v.segment<2>(f->column);
  f->omega = v(f->column + 2);
}

std::string Label(const PlanarContact& c, std::size_t index) {
  return "contact '" + c.name + "' (#" + std::to_string(index) + ")";
}

bool IsFinite(const Eigen::Vector2d& x) { return x.allFinite(); }

// A unique id per PlanarContacts object, for the per-thread geometry memo below.
std::uint64_t NextMemoId() {
  static std::atomic<std::uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// Disk–disk and disk–beam share the gap, normal and rows (the beam side is the material point
// of the centreline nearest to the disk).
bool DiskPair(PlanarContactType type) {
  return type == PlanarContactType::kDiskDisk || type == PlanarContactType::kDiskBeam;
}

// Whether neither side of contact c needs R(θ): the ground, or a zero point with no rotated
// normal (a disk's centre; a line's normal turns with its body).
bool RotationFree(const PlanarContact& c) {
  const bool a = c.body_a == engine::kGround || (DiskPair(c.type) && c.point_a.isZero());
  const bool b = c.body_b == engine::kGround || c.point_b.isZero();
  return a && b && c.node_b < 0 && c.type != PlanarContactType::kDiskBeam;  // rigid frames
}

// Writes the 1 × 3 Jacobian block of the body of frame f (nothing for the ground).
void AddBlock(const BodyFrame& f, const Eigen::Vector2d& n, double angular,
              Eigen::Ref<Eigen::MatrixXd> G, Eigen::Index row) {
  if (f.column < 0) return;
  const int k = f.column;
  G(row, k) += n.x();
  G(row, k + 1) += n.y();
  G(row, k + 2) += angular;
}

}  // namespace

PlanarContacts::PlanarContacts(std::shared_ptr<const engine::PlanarModel> model,
                               std::vector<PlanarContact> contacts)
    : model_(std::move(model)), contacts_(std::move(contacts)), memo_id_(NextMemoId()) {
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
    if (c.node_b >= 0) {
      const engine::FlexibleBeam* beam = c.body_b >= 0 ? model_->beam(c.body_b) : nullptr;
      if (beam == nullptr) fail("node_b given but body_b is not a flexible body");
      if (c.node_b >= beam->num_nodes()) {
        fail("node_b " + std::to_string(c.node_b) + " does not exist (nodes 0.." +
             std::to_string(beam->num_nodes() - 1) + ")");
      }
      if (c.point_b != Eigen::Vector2d::Zero()) fail("node_b and a non-zero point_b are exclusive");
    }
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
      case PlanarContactType::kDiskBeam:
        if (c.body_b == engine::kGround || model_->beam(c.body_b) == nullptr) {
          fail("a disk_beam contact needs a flexible body_b");
        }
        if (c.node_b >= 0 || c.point_b != Eigen::Vector2d::Zero()) {
          fail("a disk_beam contact takes no node_b or point_b (the contact point is found)");
        }
        if (!(c.radius_a > 0.0)) {
          fail("disk radius_a must be > 0, got " + std::to_string(c.radius_a));
        }
        break;
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
    if (!std::isfinite(c.friction) || c.friction < 0.0) {
      fail("friction must be a finite number >= 0, got " + std::to_string(c.friction));
    }
    engine::ConstraintRowInfo info;
    info.kind = engine::ConstraintKind::kUnilateral;
    info.name = c.name;
    info.restitution = c.restitution < 0.0 ? -1.0 : c.restitution;
    info.friction = c.friction;
    infos_.push_back(std::move(info));
  }
  // The tangential rows after all normal rows, so that frictionless rows keep their indices.
  for (std::size_t i = 0; i < contacts_.size(); ++i) {
    if (!(contacts_[i].friction > 0.0)) continue;
    engine::ConstraintRowInfo info;
    info.kind = engine::ConstraintKind::kTangential;
    info.level = engine::ConstraintLevel::kVelocity;
    info.name = contacts_[i].name + ".t";
    info.normal_row = static_cast<int>(i);
    infos_.push_back(std::move(info));
    tangent_contact_.push_back(static_cast<int>(i));
  }
  for (const PlanarContact& c : contacts_) rotation_free_.push_back(RotationFree(c) ? 1 : 0);
}

int PlanarContacts::RowContact(int row) const {
  const int n = static_cast<int>(contacts_.size());
  return row < n ? row : tangent_contact_[static_cast<std::size_t>(row - n)];
}

namespace {

void CheckSize(const char* what, const Eigen::VectorXd& x, const engine::PlanarModel& model) {
  if (x.size() != model.num_coordinates()) {
    throw std::invalid_argument(std::string("PlanarContacts: ") + what + " has " +
                                std::to_string(x.size()) + " entries, expected " +
                                std::to_string(model.num_coordinates()) +
                                " (3 per rigid body, 3 + modes per flexible body)");
  }
}

// World-frame geometry of one contact at q.
struct Geometry {
  BodyFrame a, b;
  Eigen::Vector2d rho_a, rho_b;   // rotated points: line point or disk-a centre, point or disk b
  Eigen::Vector2d p_a, p_b;       // world points
  Eigen::Vector2d n;              // world normal (lines: R_a n_a; disks: (p_b − p_a)/‖·‖)
  double distance = 0.0;          // disks: ‖p_b − p_a‖
  engine::PlanarPointState node;  // node_b ≥ 0 or disk–beam: the beam point's kinematics
  engine::BeamPoint beam_point;   // disk–beam: the centreline point X* nearest to the disk
};

// Side b of a disk–beam contact: the material point X* of the centreline nearest to p_a.
void EvaluateBeamSide(const engine::PlanarModel& model, const PlanarContact& c,
                      const Eigen::VectorXd& q, const Eigen::VectorXd& v, Geometry* geo) {
  const engine::FlexibleBeam& beam = *model.beam(c.body_b);
  const auto eta = q.segment(model.Offset(c.body_b) + 3, beam.num_modes());
  const Eigen::Vector2d c_body = geo->b.R.transpose() * (geo->p_a - geo->b.r);
  geo->beam_point = beam.PointAt(beam.NearestX(c_body, eta));
  geo->node = model.BeamPointState(c.body_b, geo->beam_point, q, v);
}

// The geometry at q (and v, which may be empty) of contact c, written into *out (every field
// that contact c's type sets; the others keep their values: the default ones when *out was
// default-constructed or last written for a contact of the same type).
void EvaluateInto(const engine::PlanarModel& model, const PlanarContact& c,
                  const Eigen::VectorXd& q, const Eigen::VectorXd& v, Geometry* out) {
  Geometry& geo = *out;
  geo.a = Frame(model, c.body_a, q);
  geo.b = Frame(model, c.body_b, q);
  if (v.size() > 0) {
    SetFrameVelocity(v, &geo.a);
    SetFrameVelocity(v, &geo.b);
  }
  const BodyFrame& a = geo.a;
  const BodyFrame& b = geo.b;
  geo.rho_a = a.R * c.point_a;
  geo.p_a = a.r + geo.rho_a;
  if (c.node_b >= 0 || c.type == PlanarContactType::kDiskBeam) {
    if (c.type == PlanarContactType::kDiskBeam) {
      EvaluateBeamSide(model, c, q, v, &geo);
    } else {
      geo.node = model.Point(c.body_b, c.node_b, c.point_b, q, v);
    }
    geo.rho_b = geo.node.s_w;
    geo.p_b = geo.node.p;
  } else {
    geo.rho_b = b.R * c.point_b;
    geo.p_b = b.r + geo.rho_b;
  }
  if (DiskPair(c.type)) {
    const Eigen::Vector2d d = geo.p_b - geo.p_a;
    geo.distance = d.norm();
    geo.n = geo.distance > 0.0
                ? Eigen::Vector2d(d / geo.distance)
                : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
  } else {
    geo.n = a.R * c.normal_a;
  }
}

Geometry Evaluate(const engine::PlanarModel& model, const PlanarContact& c,
                  const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  Geometry geo;
  EvaluateInto(model, c, q, v, &geo);
  return geo;
}

// Whether the geometry of contact c depends on v beyond the frames' velocities (a node of a
// flexible body, or the moving centreline point of a disk–beam contact).
bool VelocityDependentGeometry(const PlanarContact& c) {
  return c.node_b >= 0 || c.type == PlanarContactType::kDiskBeam;
}

// The geometry at q of every contact that a thread asked for since q last changed, for the
// PlanarContacts object `owner` (a unique id, not an address, so that a new object at a freed
// address cannot see an old entry). One evaluation of the right-hand side asks for the normal
// rows (the constraint Jacobian), then for the tangential rows of the sliding contacts (their
// friction forces) and for γ, all at one q: each contact's geometry (two body poses, sin/cos
// and the witness points) is computed once for all of them. An entry is the value Evaluate
// returns, so the rows are the same to the last bit with or without the memo. Per thread: the
// const methods stay thread-compatible.
class GeometryMemo {
 public:
  const Geometry& Get(std::uint64_t owner, const engine::PlanarModel& model,
                      const std::vector<PlanarContact>& contacts, const Eigen::VectorXd& q,
                      std::size_t i) {
    if (owner != owner_ || geo_.size() != contacts.size()) {
      // Another contact set: fresh entries (an entry is rewritten in place below, which keeps
      // only the fields of its own contact's type).
      owner_ = owner;
      geo_.assign(contacts.size(), Geometry());
      q_.resize(0);
    }
    if (q.size() != q_.size() || q != q_) {
      q_ = q;
      valid_.assign(contacts.size(), 0);
    }
    if (!valid_[i]) {
      EvaluateInto(model, contacts[i], q, kNoVelocity, &geo_[i]);  // slot i: always contact i
      valid_[i] = 1;
    }
    return geo_[i];
  }

 private:
  static inline const Eigen::VectorXd kNoVelocity;
  std::uint64_t owner_ = 0;
  Eigen::VectorXd q_;
  std::vector<Geometry> geo_;
  std::vector<char> valid_;
};

thread_local GeometryMemo memo;

// Witness points of the two surfaces (x_b on B, x_a on A, x_b − x_a = g n), the gap and the
// tangent t = J n of a contact (header, "Tangential rows").
struct TangentPoints {
  Eigen::Vector2d x_a, x_b, t;
  double gap = 0.0;
};

TangentPoints Witnesses(const PlanarContact& c, const Geometry& geo) {
  TangentPoints w;
  w.t = Perp(geo.n);
  if (DiskPair(c.type)) {
    w.gap = geo.distance - c.radius_a - c.radius_b;
    w.x_b = geo.p_b - c.radius_b * geo.n;
    w.x_a = geo.p_a + c.radius_a * geo.n;
  } else {
    w.x_b = geo.p_b - c.radius_b * geo.n;  // radius_b = 0 for a point
    w.gap = geo.n.dot(w.x_b - geo.p_a);
    w.x_a = w.x_b - w.gap * geo.n;
  }
  return w;
}

// Velocity of the material point of a side at the world point x: ṙ + ω J (x − r).
Eigen::Vector2d PointVelocity(const BodyFrame& f, const Eigen::Vector2d& x) {
  return f.r_dot + f.omega * Perp(x - f.r);
}

// The rigid velocity field that carries side b's contact point (header, "Tangential rows at a
// node"): the body frame, or for a node the node's section (centre p_b, rate Ω = ω + ψ η̇).
// `accel` is the velocity part of the centre's acceleration (v̇ = 0): 0 for a frame origin,
// −ω² ρ_b + a_elastic for a node.
struct SideField {
  BodyFrame field;
  Eigen::Vector2d accel = Eigen::Vector2d::Zero();
};

SideField FieldOfB(const Geometry& geo) {
  SideField side{geo.b, Eigen::Vector2d::Zero()};
  if (!geo.node.elastic()) return side;
  side.field.r = geo.p_b;
  side.field.r_dot = geo.node.p_dot;
  side.field.omega = geo.node.angle_rate;
  side.accel = -geo.b.omega * geo.b.omega * geo.rho_b + geo.node.a_elastic;
  return side;
}

// γ_T of a tangential row (header): ṫ·Δv + t·a_b + Ω_b n·(ẋ_b − ċ_b) − ω_a n·(ẋ_a − ṙ_a).
double TangentGamma(const PlanarContact& c, const Geometry& geo) {
  const TangentPoints w = Witnesses(c, geo);
  const Eigen::Vector2d& n = geo.n;
  const SideField b = FieldOfB(geo);
  const Eigen::Vector2d dv = PointVelocity(b.field, w.x_b) - PointVelocity(geo.a, w.x_a);
  Eigen::Vector2d n_dot = Eigen::Vector2d::Zero(), x_dot_a = n_dot, x_dot_b = n_dot;
  if (DiskPair(c.type)) {
    const Eigen::Vector2d d_dot = PointVelocity(b.field, geo.p_b) - PointVelocity(geo.a, geo.p_a);
    n_dot = (w.t.dot(d_dot) / geo.distance) * w.t;
    x_dot_b = PointVelocity(b.field, geo.p_b) - c.radius_b * n_dot;
    x_dot_a = PointVelocity(geo.a, geo.p_a) + c.radius_a * n_dot;
  } else {
    n_dot = geo.a.omega * w.t;
    x_dot_b = PointVelocity(b.field, geo.p_b) - c.radius_b * n_dot;
    x_dot_a = x_dot_b - n.dot(dv) * n - w.gap * n_dot;
  }
  const Eigen::Vector2d t_dot = Perp(n_dot);
  return t_dot.dot(dv) + w.t.dot(b.accel) + b.field.omega * n.dot(x_dot_b - b.field.r_dot) -
         geo.a.omega * n.dot(x_dot_a - geo.a.r_dot);
}

// The terms of a disk–beam γ from the motion of X* along the centreline (header):
// (t·w)(t·p_X) Ẋ*/‖d‖ + (n·ṗ_X) Ẋ*, w the material relative velocity.
double MovingPointGamma(const engine::PlanarModel& model, const PlanarContact& c,
                        const Geometry& geo, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        const Eigen::Vector2d& w) {
  const engine::FlexibleBeam& beam = *model.beam(c.body_b);
  const double X = geo.beam_point.X;
  if (!(X > 0.0 && X < beam.length())) return 0.0;  // an end: X* stays there
  const int column = model.Offset(c.body_b) + 3, m = beam.num_modes();
  const engine::BeamCurve curve = beam.Curve(geo.beam_point, q.segment(column, m));
  const Eigen::Vector2d p_x = geo.b.R * curve.u_x, p_xx = geo.b.R * curve.u_xx;
  const Eigen::Vector2d p_x_dot =
      geo.b.omega * Perp(p_x) + geo.b.R * (curve.B_x * v.segment(column, m));
  const Eigen::Vector2d d = geo.p_b - geo.p_a;
  const double x_dot = -(p_x_dot.dot(d) + p_x.dot(w)) / (p_x.squaredNorm() + p_xx.dot(d));
  const Eigen::Vector2d t = Perp(geo.n);
  return (t.dot(w) * t.dot(p_x) / geo.distance + geo.n.dot(p_x_dot)) * x_dot;
}

// The gap of a normal row from its contact's geometry (header).
double Gap(const PlanarContact& c, const Geometry& geo) {
  switch (c.type) {
    case PlanarContactType::kPointLine:
      return geo.n.dot(geo.p_b - geo.p_a);
    case PlanarContactType::kDiskLine:
      return geo.n.dot(geo.p_b - geo.p_a) - c.radius_b;
    case PlanarContactType::kDiskDisk:
    case PlanarContactType::kDiskBeam:
      return geo.distance - c.radius_a - c.radius_b;
  }
  return 0.0;
}

// The gap (header) of a contact between rigid frames (not VelocityDependentGeometry) straight
// from q: the world points p = r + R(θ) s and the line normal R_a n_a, with the ground's pose
// (r = 0, R = I) and a zero point (R(θ) 0 = 0) left out of the products, so that a ball's centre
// against a fixed line is n_a · (r_b − c_a) − r_b, a dot product and no sin/cos. The same
// operations in the same order as Gap(c, Evaluate(…)) on the terms that remain, hence the same
// value to the last bit (the products left out only add exact zeros). The event loop's root
// location evaluates gaps one row at a time at ever new q, where the memo (which serves the
// Jacobian, γ and the friction rows at one q) cannot hit.
double RigidGap(const engine::PlanarModel& model, const PlanarContact& c,
                const Eigen::VectorXd& q) {
  Eigen::Vector2d p_a = c.point_a, n = c.normal_a;
  if (c.body_a != engine::kGround) {
    const int k = model.Offset(c.body_a);
    const Eigen::Matrix2d R = Rotation(q(k + 2));
    const Eigen::Vector2d rho = R * c.point_a;
    p_a = q.segment<2>(k) + rho;
    if (!DiskPair(c.type)) n = R * c.normal_a;
  }
  Eigen::Vector2d p_b = c.point_b;
  if (c.body_b != engine::kGround) {
    const int k = model.Offset(c.body_b);
    p_b = q.segment<2>(k);
    if (!c.point_b.isZero()) {
      const Eigen::Vector2d rho = Rotation(q(k + 2)) * c.point_b;
      p_b += rho;
    }
  }
  if (DiskPair(c.type)) return (p_b - p_a).norm() - c.radius_a - c.radius_b;
  const double gap = n.dot(p_b - p_a);
  return c.type == PlanarContactType::kDiskLine ? gap - c.radius_b : gap;
}

}  // namespace

void PlanarContacts::Values(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                            Eigen::Ref<Eigen::VectorXd> g) const {
  CheckSize("q", q, *model_);
  const auto n_contacts = static_cast<int>(contacts_.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    if (rows[k] >= n_contacts) {  // tangential: a velocity-level row has no position function
      g(i) = 0.0;
      continue;
    }
    const auto contact = static_cast<std::size_t>(rows[k]);
    const PlanarContact& c = contacts_[contact];
    g(i) = VelocityDependentGeometry(c) ? Gap(c, memo.Get(memo_id_, *model_, contacts_, q, contact))
                                        : RigidGap(*model_, c, q);
  }
}

ContactSite PlanarContacts::Site(const Eigen::VectorXd& q, int i) const {
  CheckSize("q", q, *model_);
  const PlanarContact& c = contacts_.at(static_cast<std::size_t>(i));
  const Geometry& geo = memo.Get(memo_id_, *model_, contacts_, q, static_cast<std::size_t>(i));
  Eigen::Vector2d witness_a, witness_b;
  if (DiskPair(c.type)) {
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
  site.column_a = geo.a.column;
  site.column_b = geo.b.column;
  return site;
}

namespace {

// The rigid part of a row: G = [dir_bᵀ, ang_b] at side b's columns plus [dir_aᵀ, ang_a] at side
// a's (the header's normal and tangential rows; a node's modal columns come on top).
struct RowCoefficients {
  Eigen::Vector2d dir_b, dir_a;
  double ang_b = 0.0, ang_a = 0.0;
};

// ġ_T = t·(v_B(x_b) − v_A(x_a)), t·J y = n·y.
RowCoefficients TangentialRow(const PlanarContact& c, const Geometry& geo) {
  const TangentPoints w = Witnesses(c, geo);
  return {w.t, -w.t, geo.n.dot(w.x_b - geo.b.r), -geo.n.dot(w.x_a - geo.a.r)};
}

inline RowCoefficients RigidRow(const PlanarContact& c, const Geometry& geo, bool tangential) {
  const Eigen::Vector2d& n = geo.n;
  if (tangential) return TangentialRow(c, geo);
  if (DiskPair(c.type)) return {n, -n, n.dot(Perp(geo.rho_b)), -n.dot(Perp(geo.rho_a))};
  return {n, -n, n.dot(Perp(geo.rho_b)), Perp(n).dot(geo.p_b - geo.a.r)};
}

// The normal row (RigidRow with tangential = false) of a RotationFree contact straight from q,
// as RigidGap computes its gap: the world points are the bodies' origins r (or the ground's
// fixed point), the line normal is n_a, the rotated points ρ are 0, so that a ball's row against
// a fixed line is [n_aᵀ, 0] and the row of two balls ±[dᵀ/‖d‖, 0]. The same operations in the
// same order as RigidRow(c, Evaluate(…), false) on the terms that remain; the products left out
// only add exact zeros (R(θ) 0, I x), so G = 0 + row is the same to the last bit. With a rotation
// the memo's geometry, which γ and ġ reuse at the same q, is cheaper than a second sin/cos. The
// columns of the two sides come with it (−1 for the ground).
struct RigidNormalRow {
  RowCoefficients row;
  int column_a = -1, column_b = -1;
};

RigidNormalRow RotationFreeNormal(const engine::PlanarModel& model, const PlanarContact& c,
                                  const Eigen::VectorXd& q) {
  RigidNormalRow out;
  Eigen::Vector2d p_a = c.point_a, p_b = c.point_b;
  if (c.body_a != engine::kGround) {
    out.column_a = model.Offset(c.body_a);
    p_a = q.segment<2>(out.column_a);
  }
  if (c.body_b != engine::kGround) {
    out.column_b = model.Offset(c.body_b);
    p_b = q.segment<2>(out.column_b);
  }
  if (DiskPair(c.type)) {
    const Eigen::Vector2d d = p_b - p_a;
    const double distance = d.norm();
    const Eigen::Vector2d n =
        distance > 0.0 ? Eigen::Vector2d(d / distance)
                       : Eigen::Vector2d::Constant(std::numeric_limits<double>::quiet_NaN());
    out.row = {n, -n, 0.0, 0.0};
  } else {  // body a is the ground (r_a = 0): ang_a = J n · p_b
    const Eigen::Vector2d& n = c.normal_a;
    out.row = {n, -n, 0.0, Perp(n).dot(p_b)};
  }
  return out;
}

void AddRow(int column, const Eigen::Vector2d& dir, double angular, Eigen::Ref<Eigen::MatrixXd> G,
            Eigen::Index row) {
  BodyFrame f;
  f.column = column;
  AddBlock(f, dir, angular, G, row);
}

// [dirᵀ, angular] times the velocity columns of v from `column` (0 for the ground, column −1).
double SideRate(int column, const Eigen::Vector2d& dir, double angular, const Eigen::VectorXd& v) {
  if (column < 0) return 0.0;
  return dir.dot(v.segment<2>(column)) + angular * v[column + 2];
}
double SideRate(const BodyFrame& f, const Eigen::Vector2d& dir, double angular,
                const Eigen::VectorXd& v) {
  return SideRate(f.column, dir, angular, v);
}

}  // namespace

void PlanarContacts::Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                              Eigen::Ref<Eigen::MatrixXd> G) const {
  CheckSize("q", q, *model_);
  G.setZero();
  const auto n_contacts = static_cast<int>(contacts_.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int contact = RowContact(rows[k]);
    const PlanarContact& c = contacts_[static_cast<std::size_t>(contact)];
    const auto i = static_cast<Eigen::Index>(k);
    const bool tangential = rows[k] >= n_contacts;
    if (!tangential && rotation_free_[static_cast<std::size_t>(contact)]) {
      const RigidNormalRow rigid = RotationFreeNormal(*model_, c, q);
      AddRow(rigid.column_b, rigid.row.dir_b, rigid.row.ang_b, G, i);
      AddRow(rigid.column_a, rigid.row.dir_a, rigid.row.ang_a, G, i);
      continue;
    }
    const Geometry& geo =
        memo.Get(memo_id_, *model_, contacts_, q, static_cast<std::size_t>(contact));
    const RowCoefficients row = RigidRow(c, geo, tangential);
    AddBlock(geo.b, row.dir_b, row.ang_b, G, i);
    AddBlock(geo.a, row.dir_a, row.ang_a, G, i);
    if (!geo.node.elastic()) continue;
    auto modal = G.block(i, geo.node.column + 3, 1, geo.node.jac_eta.cols());
    if (tangential) {  // ∂/∂η̇ of t·(ṗ_b + Ω J (x_b − p_b)), Ω = ω + ψ η̇
      const TangentPoints w = Witnesses(c, geo);
      modal += w.t.transpose() * geo.node.jac_eta + geo.n.dot(w.x_b - geo.p_b) * geo.node.slope;
    } else {
      modal += geo.n.transpose() * geo.node.jac_eta;
    }
  }
}

bool PlanarContacts::ValuesAndRates(double /*t*/, const Eigen::VectorXd& q,
                                    const Eigen::VectorXd& v, std::span<const int> rows,
                                    Eigen::Ref<Eigen::VectorXd> g,
                                    Eigen::Ref<Eigen::VectorXd> g_dot) const {
  CheckSize("q", q, *model_);
  CheckSize("v", v, *model_);
  for (const int row : rows) {
    if (VelocityDependentGeometry(contacts_[static_cast<std::size_t>(RowContact(row))])) {
      return false;  // nodes and beam points: their modal columns (through the Jacobian)
    }
  }
  const auto n_contacts = static_cast<int>(contacts_.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int contact = RowContact(rows[k]);
    const PlanarContact& c = contacts_[static_cast<std::size_t>(contact)];
    const bool tangential = rows[k] >= n_contacts;
    const auto i = static_cast<Eigen::Index>(k);
    if (!tangential && rotation_free_[static_cast<std::size_t>(contact)]) {
      // Straight from q, as Values and Jacobian: the memo's numbers (RigidGap,
      // RotationFreeNormal) without its q comparison, copy and sin/cos at every new sample.
      const RigidNormalRow rigid = RotationFreeNormal(*model_, c, q);
      g[i] = RigidGap(*model_, c, q);
      g_dot[i] = SideRate(rigid.column_b, rigid.row.dir_b, rigid.row.ang_b, v) +
                 SideRate(rigid.column_a, rigid.row.dir_a, rigid.row.ang_a, v);
      continue;
    }
    const Geometry& geo =
        memo.Get(memo_id_, *model_, contacts_, q, static_cast<std::size_t>(contact));
    const RowCoefficients row = RigidRow(c, geo, tangential);
    g[i] = tangential ? 0.0 : Gap(c, geo);
    g_dot[i] = SideRate(geo.b, row.dir_b, row.ang_b, v) + SideRate(geo.a, row.dir_a, row.ang_a, v);
  }
  return true;
}

void PlanarContacts::Gamma(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                           std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const {
  CheckSize("q", q, *model_);
  CheckSize("v", v, *model_);
  const auto n_contacts = static_cast<int>(contacts_.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const int contact = RowContact(rows[k]);
    const PlanarContact& c = contacts_[static_cast<std::size_t>(contact)];
    // The pose part from the memo, the frames' velocities from v (the same values as
    // Evaluate(q, v)); nodes and disk–beam points depend on v themselves.
    Geometry geo;
    if (VelocityDependentGeometry(c)) {
      geo = Evaluate(*model_, c, q, v);
    } else {
      geo = memo.Get(memo_id_, *model_, contacts_, q, static_cast<std::size_t>(contact));
      SetFrameVelocity(v, &geo.a);
      SetFrameVelocity(v, &geo.b);
    }
    const auto i = static_cast<Eigen::Index>(k);
    if (rows[k] >= n_contacts) {
      gamma(i) = c.type == PlanarContactType::kDiskBeam ? DifferenceGamma(q, v, rows[k])
                                                        : TangentGamma(c, geo);
      continue;
    }
    const double w_a = geo.a.omega, w_b = geo.b.omega;
    // Velocities of the two points: ṗ = ṙ + ω J ρ.
    const Eigen::Vector2d pdot_a = geo.a.r_dot + w_a * Perp(geo.rho_a);
    const Eigen::Vector2d pdot_b =
        geo.node.elastic() ? geo.node.p_dot : Eigen::Vector2d(geo.b.r_dot + w_b * Perp(geo.rho_b));
    const Eigen::Vector2d& n = geo.n;
    if (DiskPair(c.type)) {
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
    // A node's Coriolis and foreshortening-rate terms (part of p̈_b's velocity terms).
    if (geo.node.elastic()) gamma(i) += n.dot(geo.node.a_elastic);
    if (c.type == PlanarContactType::kDiskBeam) {
      gamma(i) += MovingPointGamma(*model_, c, geo, q, v, pdot_b - pdot_a);
    }
  }
}

double PlanarContacts::DifferenceGamma(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                       int row) const {
  // q̇ = v for planar coordinates; the step balances truncation and round-off (header).
  const double eps = std::cbrt(std::numeric_limits<double>::epsilon()) /
                     std::max(1.0, v.lpNorm<Eigen::Infinity>());
  const int rows[1] = {row};
  Eigen::MatrixXd G_plus(1, q.size()), G_minus(1, q.size());
  Jacobian(0.0, q + eps * v, rows, G_plus);
  Jacobian(0.0, q - eps * v, rows, G_minus);
  return (G_plus - G_minus).row(0).dot(v) / (2.0 * eps);
}

}  // namespace saltus::contact
