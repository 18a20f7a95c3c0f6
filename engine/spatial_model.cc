#include "engine/spatial_model.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/rotation.h"
#include "engine/validation.h"

namespace saltus::engine {
namespace {

using namespace validation;  // NOLINT: shared builder checks (engine/validation.h)

// Orthonormal joint-frame axes (columns x, y, z) from an axis z and a reference x.
Eigen::Matrix3d FrameAxes(const std::string& label, const char* field, const Eigen::Vector3d& axis,
                          const Eigen::Vector3d& ref) {
  const double length = axis.norm();
  if (!(length > 0.0)) Fail(label, std::string(field) + " must be non-zero, got " + Vec(axis));
  const Eigen::Vector3d z = axis / length;
  Eigen::Vector3d x = ref - ref.dot(z) * z;
  if (!(x.norm() > 1e-9 * std::max(1.0, ref.norm()))) {
    // Any perpendicular: cross z with the world axis least aligned with it.
    Eigen::Index k = 0;
    z.cwiseAbs().minCoeff(&k);
    x = z.cross(Eigen::Vector3d::Unit(k));
  }
  x.normalize();
  Eigen::Matrix3d axes;
  axes.col(0) = x;
  axes.col(1) = z.cross(x);
  axes.col(2) = z;
  return axes;
}

// ---- Body kinematics --------------------------------------------------------------------------

// Pose and velocity of one body; the ground is the fixed world frame.
struct BodyKin {
  int body = kGround;
  int v0 = 0;  // first entry of the body's (ṙ, ω) in v, F and a G row: SpatialModel::VOffset
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();
  Eigen::Vector3d r = Eigen::Vector3d::Zero();
  Eigen::Vector3d r_dot = Eigen::Vector3d::Zero();
  Eigen::Vector3d omega = Eigen::Vector3d::Zero();  // body frame

  // World point of body point s̄ and its velocity / v̇-free acceleration.
  Eigen::Vector3d Point(const Eigen::Vector3d& s) const { return r + R * s; }
  Eigen::Vector3d PointRate(const Eigen::Vector3d& s) const { return r_dot + R * omega.cross(s); }
  Eigen::Vector3d PointAccFree(const Eigen::Vector3d& s) const {
    return R * omega.cross(omega.cross(s));
  }
  Eigen::Vector3d Vector(const Eigen::Vector3d& u) const { return R * u; }
  Eigen::Vector3d VectorRate(const Eigen::Vector3d& u) const { return R * omega.cross(u); }
  Eigen::Vector3d VectorAccFree(const Eigen::Vector3d& u) const {
    return R * omega.cross(omega.cross(u));
  }
};

BodyKin KinOf(const SpatialModel& model, int body, const Eigen::VectorXd& q) {
  BodyKin k;
  k.body = body;
  if (body == kGround) return k;
  const int q0 = model.QOffset(body);
  k.v0 = model.VOffset(body);
  k.r = q.segment<3>(q0);
  k.R = QuaternionToRotation(q.segment<4>(q0 + 3));
  return k;
}
BodyKin KinOf(const SpatialModel& model, int body, const Eigen::VectorXd& q,
              const Eigen::VectorXd& v) {
  BodyKin k = KinOf(model, body, q);
  if (body == kGround) return k;
  k.r_dot = v.segment<3>(k.v0);
  k.omega = v.segment<3>(k.v0 + 3);
  return k;
}

// Rotation matrices R(Q_i) of the bodies met in one evaluation of many joint rows, each computed
// once: every body is shared by the rows of its joints (a spherical chain has 6 rows per body),
// and recomputing R per row was the largest single cost of the row evaluations (issue 3 §8).
// Begin() starts an evaluation and invalidates all of them in O(1) (an epoch stamp per body), so
// evaluating a few rows stays O(rows), not O(bodies). An entry is also keyed by the quaternion it
// was computed from: the first use of a body in an evaluation compares Q with the stored one and
// recomputes R only when it changed, so the successive evaluations at one q (G, F and γ of a
// dynamics solve) share the matrices. R is a function of Q alone, hence the same values as a
// fresh evaluation. The quaternion of body i is q[QOffset(i) + 3, + 7) (a flexible body's frame
// quaternion would sit at the same place, its deformation not entering R).
class RotationCache {
 public:
  void Begin(const Eigen::VectorXd& q, const SpatialModel& model) {
    q_ = &q;
    model_ = &model;
    if (static_cast<int>(entries_.size()) != model.num_bodies()) {
      entries_.assign(static_cast<std::size_t>(model.num_bodies()), Entry());
    }
    if (++epoch_ == 0) {  // wrapped around: clear the stamps so that none matches by accident
      for (Entry& e : entries_) e.stamp = 0;
      epoch_ = 1;
    }
  }
  const Eigen::Matrix3d& R(int body) {
    Entry& e = entries_[static_cast<std::size_t>(body)];
    if (e.stamp != epoch_) {
      const auto Q = q_->segment<4>(model_->QOffset(body) + 3);
      if (!e.valid || !(e.Q == Q)) {
        e.Q = Q;
        e.R = QuaternionToRotation(e.Q);
        e.valid = true;
      }
      e.stamp = epoch_;
    }
    return e.R;
  }

 private:
  struct Entry {
    Eigen::Matrix3d R;
    Eigen::Vector4d Q;
    unsigned stamp = 0;
    bool valid = false;
  };
  const Eigen::VectorXd* q_ = nullptr;
  const SpatialModel* model_ = nullptr;
  std::vector<Entry> entries_;
  unsigned epoch_ = 0;
};

// The cache of the calling thread (the model is shared and evaluated from const methods).
RotationCache& ThreadRotationCache() {
  thread_local RotationCache cache;
  return cache;
}

// KinOf with R from the cache (same values as the uncached KinOf).
BodyKin KinOf(const SpatialModel& model, int body, const Eigen::VectorXd& q, RotationCache& cache) {
  BodyKin k;
  k.body = body;
  if (body == kGround) return k;
  k.v0 = model.VOffset(body);
  k.r = q.segment<3>(model.QOffset(body));
  k.R = cache.R(body);
  return k;
}
BodyKin KinOf(const SpatialModel& model, int body, const Eigen::VectorXd& q,
              const Eigen::VectorXd& v, RotationCache& cache) {
  BodyKin k = KinOf(model, body, q, cache);
  if (body == kGround) return k;
  k.r_dot = v.segment<3>(k.v0);
  k.omega = v.segment<3>(k.v0 + 3);
  return k;
}

// G row += ∂(c·ṗ)/∂v for p = body point s̄: (c, s̄ × Rᵀ c) on (ṙ, ω).
template <class Row>
void AddPointJacobian(const BodyKin& k, const Eigen::Vector3d& s, const Eigen::Vector3d& c,
                      Row&& row) {
  if (k.body == kGround) return;
  row.template segment<3>(k.v0) += c.transpose();
  row.template segment<3>(k.v0 + 3) += s.cross(k.R.transpose() * c).transpose();
}
// G row += ∂(c·u̇)/∂ω for u = body vector ū: ū × Rᵀ c.
template <class Row>
void AddVectorJacobian(const BodyKin& k, const Eigen::Vector3d& u, const Eigen::Vector3d& c,
                       Row&& row) {
  if (k.body == kGround) return;
  row.template segment<3>(k.v0 + 3) += u.cross(k.R.transpose() * c).transpose();
}

// A joint point: a point s̄ of a body frame, p = r + R s̄, or a node of a flexible body, where
// s̄ = ū(X_k, η) moves in the body frame (engine/flexible_beam_spatial.h): ṡ = B η̇, and the
// v̇-free part of s̈ is −(η̇ᵀ H η̇) e_x, so that
//   ṗ = ṙ + R (ω × s̄ + B η̇),   p̈_free = R (ω × (ω × s̄) + 2 ω × B η̇ − (η̇ᵀ H η̇) e_x),
// and ∂(c·ṗ)/∂v = (c, s̄ × Rᵀ c, Bᵀ Rᵀ c) on (ṙ, ω, η̇). At a node the joint's frame is carried by
// the node's section (SpatialFlexibleBeam::Section: Λ = R_z(a) R_y(−b) R_x(φ) from the bending
// slopes and the twist, turning at ω_s = E η̇ relative to the frame, κ = Ė η̇): a point of the
// section at the arm d (SpatialJoint::arm_a) is s̄ = ū + d_s, d_s = Λ d, with
// ∂s̄/∂η = B − [d_s]× E, ṡ = B η̇ + ω_s × d_s and the v̇-free part of s̈ gaining
// κ × d_s + ω_s × (ω_s × d_s); B, s_rate and s_acc below hold these. A joint axis ū of the section
// is R Λ ū (Vector, VectorRate, VectorAccFree, AddVectorJacobian below: the rates of the section
// header, with ∂(c·u̇)/∂v = (0, u_s × Rᵀc, Eᵀ (u_s × Rᵀc)), u_s = Λ ū). A rigid point evaluates
// the BodyKin expressions unchanged.
struct JointPoint {
  const BodyKin* k = nullptr;
  Eigen::Vector3d s = Eigen::Vector3d::Zero();
  bool node = false;
  Eigen::Vector3d s_rate = Eigen::Vector3d::Zero();  // B η̇
  Eigen::Vector3d s_acc = Eigen::Vector3d::Zero();   // −(η̇ᵀ H η̇) e_x
  Eigen::Matrix<double, 3, Eigen::Dynamic> B;
  SpatialSectionMotion section;  // at a node: the section's Λ, E, ω_s, κ

  Eigen::Vector3d Point() const { return k->Point(s); }
  Eigen::Vector3d Rate() const {
    return node ? Eigen::Vector3d(k->r_dot + k->R * (k->omega.cross(s) + s_rate)) : k->PointRate(s);
  }
  Eigen::Vector3d AccFree() const {
    return node ? Eigen::Vector3d(k->R * (k->omega.cross(k->omega.cross(s)) +
                                          2.0 * k->omega.cross(s_rate) + s_acc))
                : k->PointAccFree(s);
  }
  template <class Row>
  void AddJacobian(const Eigen::Vector3d& c, Row&& row) const {
    AddPointJacobian(*k, s, c, row);
    if (node)
      row.segment(k->v0 + 6, B.cols()) += (B.transpose() * (k->R.transpose() * c)).transpose();
  }
  // A vector ū of the joint frame (of the body, or at a node of the section) in the world.
  Eigen::Vector3d Vector(const Eigen::Vector3d& u) const {
    return node ? Eigen::Vector3d(k->R * (section.turn * u)) : k->Vector(u);
  }
  // The rate and v̇-free acceleration of a vector ū(t) of the joint frame, U = (ū, ∂ₜū, ∂ₜ²ū):
  // R (ω×ū + ∂ₜū) and R (ω×(ω×ū) + 2 ω×∂ₜū + ∂ₜ²ū) on a body; at a node, with Ω = ω + ω_s and
  // the section's Λ, R (Ω × Λū + Λ∂ₜū) and R ((ω × ω_s + κ) × Λū + Ω × (Ω × Λū) + 2 Ω × Λ∂ₜū +
  // Λ∂ₜ²ū).
  Eigen::Vector3d VectorRate(const Eigen::Matrix3d& U) const {
    if (!node) return k->R * (k->omega.cross(U.col(0)) + U.col(1));
    const Eigen::Vector3d spin = k->omega + section.rate;
    return k->R * (spin.cross(section.turn * U.col(0)) + section.turn * U.col(1));
  }
  Eigen::Vector3d VectorAccFree(const Eigen::Matrix3d& U) const {
    if (!node) {
      return k->R *
             (k->omega.cross(k->omega.cross(U.col(0))) + 2.0 * k->omega.cross(U.col(1)) + U.col(2));
    }
    const Eigen::Vector3d spin = k->omega + section.rate;
    const Eigen::Vector3d u = section.turn * U.col(0);
    return k->R *
           ((k->omega.cross(section.rate) + section.acc).cross(u) +
            spin.cross(spin.cross(u) + 2.0 * (section.turn * U.col(1))) + section.turn * U.col(2));
  }
  // G row += ∂(c·u̇)/∂v for the joint-frame vector ū.
  template <class Row>
  void AddVectorJacobian(const Eigen::Vector3d& u, const Eigen::Vector3d& c, Row&& row) const {
    if (!node) {
      saltus::engine::AddVectorJacobian(*k, u, c, row);
      return;
    }
    const Eigen::Vector3d lever = (section.turn * u).cross(k->R.transpose() * c);
    row.template segment<3>(k->v0 + 3) += lever.transpose();
    row.segment(k->v0 + 6, section.E.cols()) += (section.E.transpose() * lever).transpose();
  }
};

// The joint point of body kinematics `k` at body point `s`, or when `node` (a beam point of the
// flexible body of k) is non-null at the point of the node's section with arm `s`; `v` null:
// positions only. `axes`: the row uses this side's joint axes, so the section's turn is needed
// (it is for an arm too; a point row at the node itself skips it).
JointPoint MakeJointPoint(const SpatialModel& model, const BodyKin& k, const Eigen::Vector3d& s,
                          const SpatialBeamPoint* node, const Eigen::VectorXd& q,
                          const Eigen::VectorXd* v, bool axes) {
  JointPoint p;
  p.k = &k;
  if (node == nullptr) {
    p.s = s;
    return p;
  }
  const SpatialFlexibleBeam& beam = *model.beam(k.body);
  const int m = beam.num_modes();
  const auto eta = q.segment(model.QOffset(k.body) + 7, m);
  const Eigen::VectorXd none;
  const auto eta_dot = v ? Eigen::Ref<const Eigen::VectorXd>(v->segment(k.v0 + 6, m))
                         : Eigen::Ref<const Eigen::VectorXd>(none);
  const SpatialBeamMotion motion = beam.Motion(*node, eta, eta_dot);
  p.node = true;
  p.s = motion.u;
  p.s_rate = motion.u_dot;
  p.s_acc = Eigen::Vector3d(-motion.hdot, 0.0, 0.0);
  p.B = motion.B;
  const bool arm = s != Eigen::Vector3d::Zero();
  if (!axes && !arm) return p;
  p.section = beam.Section(*node, eta, eta_dot);
  if (arm) {  // the arm d = s of the node's section
    const SpatialSectionMotion& section = p.section;
    const Eigen::Vector3d d = section.turn * s;
    p.s += d;
    p.B -= Skew(d) * section.E;
    p.s_rate += section.rate.cross(d);
    p.s_acc += section.acc.cross(d) + section.rate.cross(section.rate.cross(d));
  }
  return p;
}

// Generalized force of a world force f at body point s̄ and a world torque n.
void AddWrench(const BodyKin& k, const Eigen::Vector3d& s, const Eigen::Vector3d& f,
               const Eigen::Vector3d& n, Eigen::VectorXd* F) {
  if (k.body == kGround) return;
  const Eigen::Vector3d f_body = k.R.transpose() * f;
  F->segment<3>(k.v0) += f;
  F->segment<3>(k.v0 + 3) += s.cross(f_body) + k.R.transpose() * n;
}

// Angle θ = atan2(x_b·y_a, x_b·x_a) of a revolute joint (x_a to x_b about z_a) and its rate
// θ̇ = (R_b ω_b − R_a ω_a)·n with n = (c (x_b × y_a) − s (x_b × x_a)) / (c² + s²), c = x_b·x_a,
// s = x_b·y_a (the exact gradient, so that a torque τ n is the force of the potential ½k(θ−θ₀)²
// even where the joint is violated; n = z_a when the joint is assembled).
struct RevoluteAngle {
  double theta = 0.0;
  double theta_dot = 0.0;
  Eigen::Vector3d n = Eigen::Vector3d::UnitZ();
};
RevoluteAngle AngleOf(const JointFrames& f, const BodyKin& a, const BodyKin& b) {
  RevoluteAngle out;
  const Eigen::Vector3d x_a = a.Vector(f.axes_a.col(0));
  const Eigen::Vector3d y_a = a.Vector(f.axes_a.col(1));
  const Eigen::Vector3d x_b = b.Vector(f.axes_b.col(0));
  const double c = x_b.dot(x_a), s = x_b.dot(y_a);
  out.theta = std::atan2(s, c);
  const double r2 = c * c + s * s;
  out.n = r2 > 0.0 ? Eigen::Vector3d((c * x_b.cross(y_a) - s * x_b.cross(x_a)) / r2)
                   : a.Vector(f.axes_a.col(2));
  out.theta_dot = (b.R * b.omega - a.R * a.omega).dot(out.n);
  return out;
}

// The same angle between the world frames of two joint sides (SpatialJointSide: at a node the
// section's axes), θ̇ = (Ω_b − Ω_a)·n with the frames' angular velocities.
RevoluteAngle AngleOf(const SpatialJointSide& a, const SpatialJointSide& b) {
  RevoluteAngle out;
  const Eigen::Vector3d x_a = a.axes.col(0), y_a = a.axes.col(1), x_b = b.axes.col(0);
  const double c = x_b.dot(x_a), s = x_b.dot(y_a);
  out.theta = std::atan2(s, c);
  const double r2 = c * c + s * s;
  out.n = r2 > 0.0 ? Eigen::Vector3d((c * x_b.cross(y_a) - s * x_b.cross(x_a)) / r2)
                   : Eigen::Vector3d(a.axes.col(2));
  out.theta_dot = (b.omega - a.omega).dot(out.n);
  return out;
}

// ---- Joint and driver rows --------------------------------------------------------------------

enum class RowType { kPoint, kDot1, kDot2, kDistance };

struct Row {
  RowType type = RowType::kPoint;
  int joint = 0;
  int component = 0;  // kPoint: x, y or z
  int body_a = kGround, body_b = kGround;
  int node_a = -1, node_b = -1;  // nodes of flexible bodies (SpatialJoint::node_a, node_b)
  Eigen::Vector3d s_a, s_b;      // joint points (body frames)
  Eigen::Vector3d u_a;           // dot1, dot2: vector on a (body-a frame)
  Eigen::Vector3d w_b;           // dot1: vector on b (body-b frame)
  double length = 0.0;           // distance
  // Drivers: angle (dot1 with ū_a(t) = cos φ y_a − sin φ x_a) or displacement (dot2 − s(t)).
  const SpatialDriver* driver = nullptr;
  // Angle driver: the joint frames (x̄_a, ȳ_a are axes_a's columns 0, 1). A pointer rather than
  // the two axes: the rows are swept twice per dynamics evaluation, and a smaller row keeps a long
  // chain's rows in cache (issue 3 §8).
  const JointFrames* frames = nullptr;
};

// The fields of a row that the hot loops read first (20 bytes instead of the 144 of a Row): a
// long chain's point rows are evaluated from these and the joint points alone, so that a sweep
// over the rows of a spherical chain touches a quarter of the memory (issue 3 §8).
struct RowHead {
  RowType type = RowType::kPoint;
  int component = 0;
  int joint = 0;
  int body_a = kGround, body_b = kGround;
};
struct JointPoints {
  Eigen::Vector3d s_a, s_b;
};

class SpatialJointBlock : public ConstraintBlock {
 public:
  explicit SpatialJointBlock(std::shared_ptr<const SpatialModel> model) : model_(std::move(model)) {
    const auto& joints = model_->joints();
    for (std::size_t j = 0; j < joints.size(); ++j) {
      const SpatialJoint& joint = joints[j];
      const JointFrames& f = model_->joint_frames()[j];
      const Eigen::Vector3d xa = f.axes_a.col(0), ya = f.axes_a.col(1), za = f.axes_a.col(2);
      const Eigen::Vector3d xb = f.axes_b.col(0), yb = f.axes_b.col(1), zb = f.axes_b.col(2);
      const int jj = static_cast<int>(j);
      auto point = [&] {
        static const char* kNames[3] = {".x", ".y", ".z"};
        for (int c = 0; c < 3; ++c) {
          Row row = Base(jj, RowType::kPoint);
          row.component = c;
          Add(row, joint.name + kNames[c]);
        }
      };
      auto dot1 = [&](const Eigen::Vector3d& u, const Eigen::Vector3d& w, const char* suffix) {
        Row row = Base(jj, RowType::kDot1);
        row.u_a = u;
        row.w_b = w;
        Add(row, joint.name + suffix);
      };
      auto dot2 = [&](const Eigen::Vector3d& u, const char* suffix) {
        Row row = Base(jj, RowType::kDot2);
        row.u_a = u;
        Add(row, joint.name + suffix);
      };
      switch (joint.type) {
        case SpatialJointType::kSpherical:
          point();
          break;
        case SpatialJointType::kRevolute:
          point();
          dot1(za, xb, ".rot1");
          dot1(za, yb, ".rot2");
          break;
        case SpatialJointType::kUniversal:
          point();
          dot1(za, zb, ".rot1");
          break;
        case SpatialJointType::kCylindrical:
        case SpatialJointType::kPrismatic:
          dot1(za, xb, ".rot1");
          dot1(za, yb, ".rot2");
          dot2(xa, ".trans1");
          dot2(ya, ".trans2");
          if (joint.type == SpatialJointType::kPrismatic) dot1(xa, yb, ".rot3");
          break;
        case SpatialJointType::kFixed:
          point();
          dot1(za, xb, ".rot1");
          dot1(za, yb, ".rot2");
          dot1(xa, yb, ".rot3");
          break;
        case SpatialJointType::kPlanar:
          dot1(za, xb, ".rot1");
          dot1(za, yb, ".rot2");
          dot2(za, ".normal");
          break;
        case SpatialJointType::kDistance: {
          Row row = Base(jj, RowType::kDistance);
          row.length = joint.length;
          Add(row, joint.name + ".distance");
          break;
        }
        case SpatialJointType::kPointOnLine:
          dot2(xa, ".trans1");
          dot2(ya, ".trans2");
          break;
        case SpatialJointType::kPointOnPlane:
          dot2(za, ".normal");
          break;
      }
    }
    for (const SpatialDriver& driver : model_->drivers()) {
      const JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(driver.joint)];
      Row row =
          Base(driver.joint, driver.kind == DriverKind::kAngle ? RowType::kDot1 : RowType::kDot2);
      row.driver = &driver;
      row.frames = &f;
      row.u_a = f.axes_a.col(2);  // displacement: along z_a
      row.w_b = f.axes_b.col(0);  // angle: x_b
      Add(row, driver.name);
    }
  }

  int num_rows() const override { return static_cast<int>(rows_.size()); }
  const ConstraintRowInfo& row_info(int local_row) const override {
    return infos_.at(static_cast<std::size_t>(local_row));
  }
  const Row& row(int local_row) const { return rows_[static_cast<std::size_t>(local_row)]; }

  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    CheckQ(q);
    RotationCache& cache = ThreadRotationCache();
    cache.Begin(q, *model_);
    int point_joint = -1;  // the point rows of a joint share d
    Eigen::Vector3d point_d = Eigen::Vector3d::Zero();
    std::optional<Sides> at_nodes;  // built at the first row at a node
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const RowHead& head = heads_[static_cast<std::size_t>(rows[k])];
      if (head.type == RowType::kPoint && !AtNode(rows[k])) {
        if (head.joint != point_joint) {
          const JointPoints& p = points_[static_cast<std::size_t>(head.joint)];
          point_d = KinOf(*model_, head.body_b, q, cache).Point(p.s_b) -
                    KinOf(*model_, head.body_a, q, cache).Point(p.s_a);
          point_joint = head.joint;
        }
        g(static_cast<Eigen::Index>(k)) = -point_d(head.component);
        continue;
      }
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      if (AtNode(rows[k])) {
        const Sides& sides = SidesOf(row, q, nullptr, cache, &at_nodes);
        g(static_cast<Eigen::Index>(k)) = Value(row, t, sides.pa, sides.pb);
        continue;
      }
      const BodyKin a = KinOf(*model_, row.body_a, q, cache);
      const BodyKin b = KinOf(*model_, row.body_b, q, cache);
      g(static_cast<Eigen::Index>(k)) =
          Value(row, t, PointA(row, a, q, nullptr), PointB(row, b, q, nullptr));
    }
  }

  // g of `row` from its joint points.
  static double Value(const Row& row, double t, const JointPoint& pa, const JointPoint& pb) {
    {
      const Eigen::Vector3d d = pb.Point() - pa.Point();
      double value = 0.0;
      switch (row.type) {
        case RowType::kPoint:
          value = -d(row.component);
          break;
        case RowType::kDot1:
          value = pa.Vector(UBar(row, t).col(0)).dot(pb.Vector(row.w_b));
          break;
        case RowType::kDot2:
          value =
              pa.Vector(row.u_a).dot(d) - (row.driver ? row.driver->profile.Evaluate(t)(0) : 0.0);
          break;
        case RowType::kDistance:
          value = (d.squaredNorm() - row.length * row.length) / (2.0 * row.length);
          break;
      }
      return value;
    }
  }

  void Jacobian(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    CheckQ(q);
    RotationCache& cache = ThreadRotationCache();
    cache.Begin(q, *model_);
    G.setZero();
    std::optional<Sides> at_nodes;  // built at the first row at a node
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      if (AtNode(rows[k])) {
        const Sides& sides = SidesOf(row, q, nullptr, cache, &at_nodes);
        JacobianRow(row, t, sides.pa, sides.pb, G.row(static_cast<Eigen::Index>(k)));
        continue;
      }
      const BodyKin a = KinOf(*model_, row.body_a, q, cache);
      const BodyKin b = KinOf(*model_, row.body_b, q, cache);
      JacobianRow(row, t, PointA(row, a, q, nullptr), PointB(row, b, q, nullptr),
                  G.row(static_cast<Eigen::Index>(k)));
    }
  }

  // Appends row `local_row` of G to G as the 6-blocks of its bodies, the lower body index first
  // (a ground side has none). `cache` must have been begun at this q. Rigid only, like
  // BlockSparseMatrices: a flexible body's block would also hold its modal columns.
  void AppendBlocks(double t, const Eigen::VectorXd& q, int local_row, RotationCache& cache,
                    BlockSparseRows* G) const {
    const RowHead& head = heads_[static_cast<std::size_t>(local_row)];
    const int first =
        head.body_a == kGround || (head.body_b != kGround && head.body_b < head.body_a) ? 1 : 0;
    if (head.type == RowType::kPoint) {
      // JacobianRow's point case: (e_c, s̄_a × Rₐᵀ e_c) on a, the opposite with s̄_b on b.
      const JointPoints& p = points_[static_cast<std::size_t>(head.joint)];
      const int c = head.component;
      for (const int side : {first, 1 - first}) {
        const int body = side == 0 ? head.body_a : head.body_b;
        if (body == kGround) continue;
        const Eigen::Vector3d angular =
            (side == 0 ? p.s_a : p.s_b).cross(cache.R(body).row(c).transpose());
        double* out = G->AddBlock(body);
        const double sign = side == 0 ? 1.0 : -1.0;
        out[c] = sign;
        for (int j = 0; j < 3; ++j) out[3 + j] = sign * angular(j);
      }
      G->EndRow();
      return;
    }
    Eigen::Matrix<double, 1, 12> blocks;
    JacobianBlocks(t, q, local_row, cache, &blocks);
    for (const int side : {first, 1 - first}) {
      const int body = side == 0 ? head.body_a : head.body_b;
      if (body == kGround) continue;
      double* out = G->AddBlock(body);
      for (int j = 0; j < 6; ++j) out[j] = blocks(6 * side + j);
    }
    G->EndRow();
  }

  // Row `local_row` of G as its two 6-blocks: on body_a (columns 0-5 of `blocks`) and body_b
  // (columns 6-11); a ground side stays zero. `cache` must have been begun at this q.
  void JacobianBlocks(double t, const Eigen::VectorXd& q, int local_row, RotationCache& cache,
                      Eigen::Matrix<double, 1, 12>* blocks) const {
    const Row& row = rows_[static_cast<std::size_t>(local_row)];
    BodyKin a = KinOf(*model_, row.body_a, q, cache);
    BodyKin b = KinOf(*model_, row.body_b, q, cache);
    a.v0 = 0;  // columns of the 12-wide row: a's 6-block, then b's
    b.v0 = 6;
    blocks->setZero();
    JacobianRow(row, t, PointA(row, a, q, nullptr), PointB(row, b, q, nullptr), *blocks);
  }

  // G row += ∂ġ/∂v of `row`, with the bodies' columns at a.v0 and b.v0 (pa.k, pb.k).
  template <class GRow>
  static void JacobianRow(const Row& row, double t, const JointPoint& pa, const JointPoint& pb,
                          GRow&& G_row) {
    const BodyKin& a = *pa.k;
    const BodyKin& b = *pb.k;
    {
      if (row.type == RowType::kPoint && (pa.node || pb.node)) {
        const Eigen::Vector3d e = Eigen::Vector3d::Unit(row.component);
        if (a.body != kGround) pa.AddJacobian(e, G_row);
        if (b.body != kGround) pb.AddJacobian(-e, G_row);
        return;
      }
      if (row.type == RowType::kPoint) {
        // g = (p_a − p_b)_c: ∂ġ/∂v = (e_c, s̄_a × Rₐᵀ e_c) on a, the opposite with s̄_b on b
        // (Rᵀ e_c is row c of R; AddPointJacobian without its matrix-vector product).
        const int c = row.component;
        if (a.body != kGround) {
          G_row(a.v0 + c) += 1.0;
          G_row.template segment<3>(a.v0 + 3) += row.s_a.cross(a.R.row(c).transpose()).transpose();
        }
        if (b.body != kGround) {
          G_row(b.v0 + c) -= 1.0;
          G_row.template segment<3>(b.v0 + 3) -= row.s_b.cross(b.R.row(c).transpose()).transpose();
        }
        return;
      }
      const Eigen::Vector3d d = pb.Point() - pa.Point();
      switch (row.type) {
        case RowType::kPoint:
          break;
        case RowType::kDot1: {
          // ġ = u̇_a · w_b + u_a · ẇ_b.
          const Eigen::Vector3d u_bar = UBar(row, t).col(0);
          const Eigen::Vector3d u = pa.Vector(u_bar);
          const Eigen::Vector3d w = pb.Vector(row.w_b);
          pa.AddVectorJacobian(u_bar, w, G_row);
          pb.AddVectorJacobian(row.w_b, u, G_row);
          break;
        }
        case RowType::kDot2: {
          // ġ = u̇_a · d + u_a · (ṗ_b − ṗ_a) − ṡ.
          const Eigen::Vector3d u = pa.Vector(row.u_a);
          pa.AddVectorJacobian(row.u_a, d, G_row);
          if (b.body != kGround) pb.AddJacobian(u, G_row);
          if (a.body != kGround) pa.AddJacobian(-u, G_row);
          break;
        }
        case RowType::kDistance: {
          // ġ = d · ḋ / L.
          const Eigen::Vector3d c = d / row.length;
          if (b.body != kGround) pb.AddJacobian(c, G_row);
          if (a.body != kGround) pa.AddJacobian(-c, G_row);
          break;
        }
      }
    }
  }

  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    CheckQ(q);
    RotationCache& cache = ThreadRotationCache();
    cache.Begin(q, *model_);
    // The point rows of a joint share d̈_free: computed once for the three.
    int point_joint = -1;
    Eigen::Vector3d point_acc = Eigen::Vector3d::Zero();
    std::optional<Sides> at_nodes;  // built at the first row at a node
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const RowHead& head = heads_[static_cast<std::size_t>(rows[k])];
      if (head.type == RowType::kPoint && !AtNode(rows[k])) {
        if (head.joint != point_joint) {
          const JointPoints& p = points_[static_cast<std::size_t>(head.joint)];
          const BodyKin a = KinOf(*model_, head.body_a, q, v, cache);
          const BodyKin b = KinOf(*model_, head.body_b, q, v, cache);
          point_acc = b.PointAccFree(p.s_b) - a.PointAccFree(p.s_a);
          point_joint = head.joint;
        }
        gamma(static_cast<Eigen::Index>(k)) = -point_acc(head.component);
        continue;
      }
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      if (AtNode(rows[k])) {
        const Sides& sides = SidesOf(row, q, &v, cache, &at_nodes);
        gamma(static_cast<Eigen::Index>(k)) = RowGamma(row, t, sides.pa, sides.pb);
        continue;
      }
      const BodyKin a = KinOf(*model_, row.body_a, q, v, cache);
      const BodyKin b = KinOf(*model_, row.body_b, q, v, cache);
      gamma(static_cast<Eigen::Index>(k)) =
          RowGamma(row, t, PointA(row, a, q, &v), PointB(row, b, q, &v));
    }
  }

  // γ of `row` from its joint points (evaluated with v).
  static double RowGamma(const Row& row, double t, const JointPoint& pa, const JointPoint& pb) {
    {
      const BodyKin& a = *pa.k;
      const BodyKin& b = *pb.k;
      const Eigen::Vector3d d = pb.Point() - pa.Point();
      const Eigen::Vector3d d_dot = pb.Rate() - pa.Rate();
      const Eigen::Vector3d d_acc = pb.AccFree() - pa.AccFree();
      double value = 0.0;
      switch (row.type) {
        case RowType::kPoint:
          value = -d_acc(row.component);
          break;
        case RowType::kDot1: {
          // ū_a(t) with ∂ₜū, ∂ₜ²ū (zero for joints): u̇ = R(ω×ū + ∂ₜū),
          // ü_free = R(ω×(ω×ū) + 2 ω×∂ₜū + ∂ₜ²ū); γ = ü_free·w + 2 u̇·ẇ + u·ẅ_free.
          // At a node, the section's vectors (JointPoint).
          const Eigen::Matrix3d U = UBar(row, t);
          const Eigen::Vector3d u = pa.Vector(U.col(0));
          const Eigen::Vector3d u_dot = pa.VectorRate(U);
          const Eigen::Vector3d u_acc = pa.VectorAccFree(U);
          const Eigen::Vector3d w = pb.Vector(row.w_b);
          Eigen::Vector3d w_dot, w_acc;
          if (pb.node) {
            const Eigen::Matrix3d W = Constant(row.w_b);
            w_dot = pb.VectorRate(W);
            w_acc = pb.VectorAccFree(W);
          } else {
            w_dot = b.VectorRate(row.w_b);
            w_acc = b.VectorAccFree(row.w_b);
          }
          value = u_acc.dot(w) + 2.0 * u_dot.dot(w_dot) + u.dot(w_acc);
          break;
        }
        case RowType::kDot2: {
          // γ = ü_free·d + 2 u̇·ḋ + u·d̈_free − s̈.
          if (pa.node) {
            const Eigen::Matrix3d U = Constant(row.u_a);
            value = pa.VectorAccFree(U).dot(d) + 2.0 * pa.VectorRate(U).dot(d_dot) +
                    pa.Vector(row.u_a).dot(d_acc);
          } else {
            value = a.VectorAccFree(row.u_a).dot(d) + 2.0 * a.VectorRate(row.u_a).dot(d_dot) +
                    a.Vector(row.u_a).dot(d_acc);
          }
          if (row.driver) value -= row.driver->profile.Evaluate(t)(2);
          break;
        }
        case RowType::kDistance:
          value = (d_dot.squaredNorm() + d.dot(d_acc)) / row.length;
          break;
      }
      return value;
    }
  }

  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    CheckQ(q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      if (heads_[static_cast<std::size_t>(rows[k])].type == RowType::kPoint) {  // never driven
        g_t(static_cast<Eigen::Index>(k)) = 0.0;
        continue;
      }
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      double value = 0.0;
      if (row.driver) {
        if (row.type == RowType::kDot1) {
          const BodyKin a = KinOf(*model_, row.body_a, q);
          const BodyKin b = KinOf(*model_, row.body_b, q);
          const JointPoint pa = PointA(row, a, q, nullptr), pb = PointB(row, b, q, nullptr);
          value = pa.Vector(UBar(row, t).col(1)).dot(pb.Vector(row.w_b));
        } else {
          value = -row.driver->profile.Evaluate(t)(1);
        }
      }
      g_t(static_cast<Eigen::Index>(k)) = value;
    }
  }

 private:
  Row Base(int joint_index, RowType type) const {
    const SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(joint_index)];
    const JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(joint_index)];
    Row row;
    row.type = type;
    row.joint = joint_index;
    row.body_a = joint.body_a;
    row.body_b = joint.body_b;
    row.node_a = joint.node_a;
    row.node_b = joint.node_b;
    row.s_a = joint.node_a >= 0 ? joint.arm_a : f.point_a;  // at a node: its arm (MakeJointPoint)
    row.s_b = joint.node_b >= 0 ? joint.arm_b : f.point_b;
    row.u_a = Eigen::Vector3d::Zero();
    row.w_b = Eigen::Vector3d::Zero();
    return row;
  }
  void Add(const Row& row, std::string name) {
    rows_.push_back(row);
    const bool at_node = row.node_a >= 0 || row.node_b >= 0;
    at_node_.push_back(at_node ? 1 : 0);
    has_nodes_ = has_nodes_ || at_node;
    const auto j = static_cast<std::size_t>(row.joint);
    if (at_node && node_points_.size() <= j) node_points_.resize(j + 1);
    if (row.node_a >= 0) node_points_[j].a = NodePoint(row.body_a, row.node_a);
    if (row.node_b >= 0) node_points_[j].b = NodePoint(row.body_b, row.node_b);
    if (at_node) {  // as PointA and PointB: a's axes for dot1 and dot2 rows, b's for dot1
      node_points_[j].axes_a |= row.type == RowType::kDot1 || row.type == RowType::kDot2;
      node_points_[j].axes_b |= row.type == RowType::kDot1;
    }
    heads_.push_back(RowHead{row.type, row.component, row.joint, row.body_a, row.body_b});
    const auto joint = static_cast<std::size_t>(row.joint);
    if (points_.size() <= joint) points_.resize(joint + 1);
    points_[joint] = JointPoints{row.s_a, row.s_b};
    ConstraintRowInfo info;
    info.kind = ConstraintKind::kBilateral;
    info.name = std::move(name);
    infos_.push_back(std::move(info));
  }
  // A constant vector of a joint frame as UBar's columns (ū, 0, 0).
  static Eigen::Matrix3d Constant(const Eigen::Vector3d& u) {
    Eigen::Matrix3d U = Eigen::Matrix3d::Zero();
    U.col(0) = u;
    return U;
  }
  // Columns ū_a, ∂ₜū_a, ∂ₜ²ū_a of the dot1 vector on a (time-dependent for angle drivers:
  // ū = cos φ ȳ − sin φ x̄).
  static Eigen::Matrix3d UBar(const Row& row, double t) {
    Eigen::Matrix3d U = Eigen::Matrix3d::Zero();
    if (!row.driver) {
      U.col(0) = row.u_a;
      return U;
    }
    const Eigen::Vector3d phi = row.driver->profile.Evaluate(t);
    const double c = std::cos(phi(0)), s = std::sin(phi(0));
    const Eigen::Vector3d x_a = row.frames->axes_a.col(0), y_a = row.frames->axes_a.col(1);
    const Eigen::Vector3d e = c * y_a - s * x_a;       // ū
    const Eigen::Vector3d e_phi = -s * y_a - c * x_a;  // ∂ū/∂φ
    U.col(0) = e;
    U.col(1) = phi(1) * e_phi;
    U.col(2) = phi(2) * e_phi - phi(1) * phi(1) * e;  // ∂²ū/∂φ² = −ū
    return U;
  }
  void CheckQ(const Eigen::VectorXd& q) const {
    CheckSize(q, model_->num_q(), "q", "spatial joint constraints");
  }
  // Whether local row r has a side at a node of a flexible body.
  bool AtNode(int r) const { return has_nodes_ && at_node_[static_cast<std::size_t>(r)] != 0; }
  SpatialBeamPoint NodePoint(int body, int node) const {
    const SpatialFlexibleBeam& beam = *model_->beam(body);
    return beam.PointAt(beam.NodeX(node));
  }
  // The bodies and joint points of the two sides of a row with a side at a node, computed once
  // per joint and evaluation: `cache` keeps the last joint's (a joint's rows are consecutive in a
  // sweep), with the sections' axes when any row of the joint reads them (the node's motion and
  // the section's Λ, E, ω_s and κ cost more than the rest of a row). The points are those of
  // PointA and PointB (the axes only add the section), so the rows' values are unchanged.
  struct Sides {
    int joint = -1;
    BodyKin a, b;
    JointPoint pa, pb;  // pa.k = &a, pb.k = &b: a Sides is not copied
    Sides() = default;
    Sides(const Sides&) = delete;
    Sides& operator=(const Sides&) = delete;
  };
  const Sides& SidesOf(const Row& row, const Eigen::VectorXd& q, const Eigen::VectorXd* v,
                       RotationCache& rotations, std::optional<Sides>* slot) const {
    if (!slot->has_value()) slot->emplace();
    Sides* cache = &**slot;
    if (cache->joint == row.joint) return *cache;
    cache->a =
        v ? KinOf(*model_, row.body_a, q, *v, rotations) : KinOf(*model_, row.body_a, q, rotations);
    cache->b =
        v ? KinOf(*model_, row.body_b, q, *v, rotations) : KinOf(*model_, row.body_b, q, rotations);
    const auto j = static_cast<std::size_t>(row.joint);
    const NodePoints& nodes = node_points_[j];
    cache->pa = MakeJointPoint(*model_, cache->a, row.s_a, row.node_a >= 0 ? &nodes.a : nullptr, q,
                               v, nodes.axes_a);
    cache->pb = MakeJointPoint(*model_, cache->b, row.s_b, row.node_b >= 0 ? &nodes.b : nullptr, q,
                               v, nodes.axes_b);
    cache->joint = row.joint;
    return *cache;
  }
  // The joint points of a row's two sides (v null: positions only).
  JointPoint PointA(const Row& row, const BodyKin& a, const Eigen::VectorXd& q,
                    const Eigen::VectorXd* v) const {
    const SpatialBeamPoint* node =
        row.node_a >= 0 ? &node_points_[static_cast<std::size_t>(row.joint)].a : nullptr;
    // Side a's axes: u_a of dot1 and dot2 rows.
    const bool axes = row.type == RowType::kDot1 || row.type == RowType::kDot2;
    return MakeJointPoint(*model_, a, row.s_a, node, q, v, axes);
  }
  JointPoint PointB(const Row& row, const BodyKin& b, const Eigen::VectorXd& q,
                    const Eigen::VectorXd* v) const {
    const SpatialBeamPoint* node =
        row.node_b >= 0 ? &node_points_[static_cast<std::size_t>(row.joint)].b : nullptr;
    // Side b's axes: w_b of dot1 rows.
    return MakeJointPoint(*model_, b, row.s_b, node, q, v, row.type == RowType::kDot1);
  }

  std::shared_ptr<const SpatialModel> model_;
  std::vector<Row> rows_;
  std::vector<RowHead> heads_;       // rows_[r]'s type, component, joint and bodies
  std::vector<JointPoints> points_;  // per joint: s̄_a, s̄_b (those of all its rows)
  struct NodePoints {
    SpatialBeamPoint a, b;                // the beam points of node_a, node_b (when set)
    bool axes_a = false, axes_b = false;  // some row of the joint reads side a's / b's axes
  };
  std::vector<NodePoints> node_points_;  // per joint with a node (indexed by joint)
  std::vector<char> at_node_;            // per row: a side at a node
  bool has_nodes_ = false;
  std::vector<ConstraintRowInfo> infos_;
};

// The frame of body `body` at its point s̄ with axes ā (node < 0), or at node `node` of its beam:
// the section's point at the arm s̄ and the section's axes R Λ ā (SpatialJointSide).
SpatialJointSide SideOf(const SpatialModel& model, int body, int node, const Eigen::Vector3d& s,
                        const Eigen::Matrix3d& axes, const Eigen::VectorXd& q,
                        const Eigen::VectorXd* v) {
  const BodyKin k = v ? KinOf(model, body, q, *v) : KinOf(model, body, q);
  SpatialJointSide side;
  side.body = body;
  side.v0 = k.v0;
  side.R = k.R;
  if (node < 0) {
    side.s = s;
    side.point = k.Point(side.s);
    side.axes = k.R * axes;
    if (v) {
      side.point_rate = k.PointRate(side.s);
      side.point_acc = k.PointAccFree(side.s);
      side.omega = k.R * k.omega;
    }
    return side;
  }
  const SpatialFlexibleBeam& beam = *model.beam(body);
  const SpatialBeamPoint at = beam.PointAt(beam.NodeX(node));
  const JointPoint p = MakeJointPoint(model, k, s, &at, q, v, /*axes=*/true);
  side.node = true;
  side.s = p.s;
  side.B = p.B;
  side.E = p.section.E;
  side.point = p.Point();
  side.axes = k.R * p.section.turn * axes;
  if (v) {
    side.point_rate = p.Rate();
    side.point_acc = p.AccFree();
    side.omega = k.R * (k.omega + p.section.rate);
    side.alpha = k.R * (k.omega.cross(p.section.rate) + p.section.acc);
  }
  return side;
}

// End b (side_b) or a of a spring-damper: its node's section point at the arm, or its body point.
SpatialJointSide SpringEnd(const SpatialModel& model, const SpatialSpringDamper& spring,
                           bool side_b, const Eigen::VectorXd& q, const Eigen::VectorXd* v) {
  if (side_b) {
    return SideOf(model, spring.body_b, spring.node_b,
                  spring.node_b < 0 ? spring.point_b : spring.arm_b, Eigen::Matrix3d::Identity(), q,
                  v);
  }
  return SideOf(model, spring.body_a, spring.node_a,
                spring.node_a < 0 ? spring.point_a : spring.arm_a, Eigen::Matrix3d::Identity(), q,
                v);
}

// The spring-damper's force on end b at d = p_b − p_a, ḋ: −(k (ℓ − L₀) + c ℓ̇) e, e = d/ℓ (same
// conventions as the planar model). With L₀ = 0 the elastic part is −k d, defined at ℓ = 0; the
// rest (direction and damping) is taken as zero at ℓ = 0.
Eigen::Vector3d SpringForceOnB(const SpatialSpringDamper& spring, const Eigen::Vector3d& d,
                               const Eigen::Vector3d& d_dot) {
  const double length = d.norm();
  Eigen::Vector3d f_b = Eigen::Vector3d::Zero();
  if (spring.rest_length == 0.0) f_b = -spring.stiffness * d;
  if (length > 0.0) {
    const Eigen::Vector3d e = d / length;
    double tension = spring.damping * e.dot(d_dot);
    if (spring.rest_length != 0.0) tension += spring.stiffness * (length - spring.rest_length);
    f_b -= tension * e;
  }
  return f_b;
}

}  // namespace

SpatialJointSide JointSideOf(const SpatialModel& model, int joint, bool side_b,
                             const Eigen::VectorXd& q, const Eigen::VectorXd* v) {
  const SpatialJoint& j = model.joints()[static_cast<std::size_t>(joint)];
  const JointFrames& f = model.joint_frames()[static_cast<std::size_t>(joint)];
  if (side_b)
    return SideOf(model, j.body_b, j.node_b, j.node_b < 0 ? f.point_b : j.arm_b, f.axes_b, q, v);
  return SideOf(model, j.body_a, j.node_a, j.node_a < 0 ? f.point_a : j.arm_a, f.axes_a, q, v);
}

// ---- SpatialModel -------------------------------------------------------------------------------

int SpatialModel::FindBody(const std::string& name) const {
  if (name == "ground") return kGround;
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].name == name) return static_cast<int>(i);
  }
  return -2;
}

int SpatialModel::FindJoint(const std::string& name) const {
  for (std::size_t i = 0; i < joints_.size(); ++i) {
    if (joints_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Eigen::VectorXd SpatialModel::InitialPositions() const {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(num_q());  // η = 0
  for (int i = 0; i < num_bodies(); ++i) {
    const SpatialBody& body = bodies_[static_cast<std::size_t>(i)];
    q.segment<3>(QOffset(i)) = body.position;
    q.segment<4>(QOffset(i) + 3) = body.quaternion;
    if (body.modal_position.size() > 0) {
      q.segment(QOffset(i) + 7, body.modal_position.size()) = body.modal_position;
    }
  }
  return q;
}

Eigen::VectorXd SpatialModel::InitialVelocities() const {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(num_v());  // η̇ = 0
  for (int i = 0; i < num_bodies(); ++i) {
    const SpatialBody& body = bodies_[static_cast<std::size_t>(i)];
    v.segment<3>(VOffset(i)) = body.velocity;
    v.segment<3>(VOffset(i) + 3) = body.angular_velocity;
    if (body.modal_velocity.size() > 0) {
      v.segment(VOffset(i) + 6, body.modal_velocity.size()) = body.modal_velocity;
    }
  }
  return v;
}

// ---- SpatialModelBuilder ------------------------------------------------------------------------

int SpatialModelBuilder::AddBody(const SpatialBody& body) {
  RequireName("body", body.name, model_.bodies_.size());
  const std::string label = Label("body", body.name);
  if (body.name == "ground") Fail(label, "the name 'ground' is reserved for the fixed frame");
  RequireUniqueName(label, body.name, model_.bodies_);
  std::shared_ptr<const SpatialFlexibleBeam> beam;
  if (body.beam) {
    // Throws std::invalid_argument naming the body (E, ρ, sizes, I_xz, the mode count).
    beam = std::make_shared<const SpatialFlexibleBeam>(*body.beam, body.second_moment_xz,
                                                       body.torsion, label);
    for (const auto& [field, x] : {std::pair("modal_position", &body.modal_position),
                                   std::pair("modal_velocity", &body.modal_velocity)}) {
      if (x->size() != 0 && x->size() != beam->num_modes()) {
        Fail(label, std::string(field) + " has " + std::to_string(x->size()) +
                        " entries, the body " + std::to_string(beam->num_modes()) + " modes");
      }
      if (!x->allFinite()) Fail(label, std::string(field) + " must be finite");
    }
  } else {
    RequireFinite(label, "mass", body.mass);
    if (!(body.mass > 0.0)) Fail(label, "mass must be > 0, got " + Num(body.mass));
    const Eigen::Matrix3d& J = body.inertia;
    if (!J.allFinite()) Fail(label, "inertia must be finite");
    if (!((J - J.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * J.cwiseAbs().maxCoeff())) {
      Fail(label, "inertia must be symmetric, got rows " + Vec(J.row(0)) + ", " + Vec(J.row(1)) +
                      ", " + Vec(J.row(2)));
    }
    Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> eig(J);
    if (!(eig.eigenvalues().minCoeff() > 0.0)) {
      Fail(label,
           "inertia must be positive definite, its eigenvalues are " + Vec(eig.eigenvalues()));
    }
  }
  RequireFiniteVec(label, "com", body.com);
  RequireFiniteVec(label, "position", body.position);
  RequireFiniteVec(label, "quaternion", body.quaternion);
  RequireFiniteVec(label, "velocity", body.velocity);
  RequireFiniteVec(label, "angular_velocity", body.angular_velocity);
  SpatialBody stored = body;
  stored.inertia = 0.5 * (body.inertia + body.inertia.transpose());
  if (beam) {  // the beam's mass; inertia and com are not used for a flexible body
    stored.mass = beam->mass();
    stored.com.setZero();
  }
  const double norm = body.quaternion.norm();
  if (std::abs(norm - 1.0) > 1e-6) {
    Fail(label, "quaternion must be unit, got " + Vec(body.quaternion) + " of norm " + Num(norm));
  }
  if (norm != 1.0) {
    stored.quaternion /= norm;
    if (std::abs(norm - 1.0) > 1e-12) {
      warnings_.push_back(label + ": quaternion of norm " + Num(norm) + " normalized");
    }
  }
  model_.bodies_.push_back(std::move(stored));
  model_.q_offset_.push_back(model_.num_q_);
  model_.v_offset_.push_back(model_.num_v_);
  const int modes = beam ? beam->num_modes() : 0;
  model_.num_q_ += SpatialModel::kRigidNq + modes;
  model_.num_v_ += SpatialModel::kRigidNv + modes;
  model_.has_flexible_ = model_.has_flexible_ || beam != nullptr;
  model_.beams_.push_back(std::move(beam));
  return model_.num_bodies() - 1;
}

int SpatialModelBuilder::AddJoint(const SpatialJoint& joint) {
  const std::string label = RequireTwoBodyItem("joint", joint, model_.joints_, model_.num_bodies());
  RequireFiniteVec(label, "point_a", joint.point_a);
  RequireFiniteVec(label, "point_b", joint.point_b);
  RequireFiniteVec(label, "axis_a", joint.axis_a);
  RequireFiniteVec(label, "axis_b", joint.axis_b);
  RequireFiniteVec(label, "ref_a", joint.ref_a);
  RequireFiniteVec(label, "ref_b", joint.ref_b);
  RequireFinite(label, "length", joint.length);
  RequireFiniteVec(label, "arm_a", joint.arm_a);
  RequireFiniteVec(label, "arm_b", joint.arm_b);
  for (const auto& [node, body, point, arm, side] :
       {std::tuple(joint.node_a, joint.body_a, joint.point_a, joint.arm_a, "a"),
        std::tuple(joint.node_b, joint.body_b, joint.point_b, joint.arm_b, "b")}) {
    if (node == -1) {
      if (arm != Eigen::Vector3d::Zero()) {
        Fail(label, std::string("arm_") + side + " needs node_" + side + ", got " + Vec(arm));
      }
      continue;
    }
    const SpatialFlexibleBeam* beam =
        body == kGround ? nullptr : model_.beams_[static_cast<std::size_t>(body)].get();
    const std::string field = std::string("node_") + side;
    if (beam == nullptr) Fail(label, field + " needs a flexible body_" + side);
    const int elements = beam->properties().elements;
    if (node < 0 || node > elements) {
      Fail(label, field + " " + std::to_string(node) + " is not a node of the beam (0.." +
                      std::to_string(elements) + ")");
    }
    if (point != Eigen::Vector3d::Zero()) {
      Fail(label,
           std::string("point_") + side + " must be zero with " + field + ", got " + Vec(point));
    }
  }
  if (joint.type == SpatialJointType::kDistance && !(joint.length > 0.0)) {
    Fail(label, "distance joint length must be > 0, got " + Num(joint.length));
  }
  JointFrames frames;
  frames.point_a = joint.point_a;
  frames.point_b = joint.point_b;
  frames.axes_a = FrameAxes(label, "axis_a", joint.axis_a, joint.ref_a);
  frames.axes_b = FrameAxes(label, "axis_b", joint.axis_b, joint.ref_b);
  model_.joints_.push_back(joint);
  model_.frames_.push_back(frames);
  return static_cast<int>(model_.joints_.size()) - 1;
}

int SpatialModelBuilder::AddDriver(const SpatialDriver& driver) {
  RequireName("driver", driver.name, model_.drivers_.size());
  const std::string label = Label("driver", driver.name);
  RequireUniqueName(label, driver.name, model_.drivers_);
  if (driver.joint < 0 || driver.joint >= static_cast<int>(model_.joints_.size())) {
    Fail(label, "unknown joint index " + std::to_string(driver.joint));
  }
  const SpatialJoint& joint = model_.joints_[static_cast<std::size_t>(driver.joint)];
  const SpatialJointType type = joint.type;
  if (driver.kind == DriverKind::kAngle && type != SpatialJointType::kRevolute &&
      type != SpatialJointType::kCylindrical) {
    Fail(label, "an angle driver needs a revolute or cylindrical joint, joint '" + joint.name +
                    "' is not one");
  }
  if (driver.kind == DriverKind::kDisplacement && type != SpatialJointType::kPrismatic &&
      type != SpatialJointType::kCylindrical) {
    Fail(label, "a displacement driver needs a prismatic or cylindrical joint, joint '" +
                    joint.name + "' is not one");
  }
  ValidateProfile(label, driver.profile);
  model_.drivers_.push_back(driver);
  return static_cast<int>(model_.drivers_.size()) - 1;
}

int SpatialModelBuilder::AddSpringDamper(const SpatialSpringDamper& spring) {
  const std::string label = RequireSpringDamper(spring, model_.springs_, model_.num_bodies());
  RequireFiniteVec(label, "arm_a", spring.arm_a);
  RequireFiniteVec(label, "arm_b", spring.arm_b);
  // A node (the end is its section's point at the arm) needs a flexible body and a zero point;
  // an arm needs a node.
  for (const auto& [field, body, node, point_field, point, arm_field, arm] :
       {std::tuple("node_a", spring.body_a, spring.node_a, "point_a", &spring.point_a, "arm_a",
                   &spring.arm_a),
        std::tuple("node_b", spring.body_b, spring.node_b, "point_b", &spring.point_b, "arm_b",
                   &spring.arm_b)}) {
    if (node == -1) {
      if (*arm != Eigen::Vector3d::Zero()) {
        Fail(label, std::string(arm_field) + " needs " + field + ", got " + Vec(*arm));
      }
      continue;
    }
    const SpatialFlexibleBeam* beam =
        body >= 0 ? model_.beams_[static_cast<std::size_t>(body)].get() : nullptr;
    if (beam == nullptr) Fail(label, std::string(field) + " needs a flexible body");
    if (node < 0 || node > beam->properties().elements) {
      Fail(label, std::string(field) + " " + std::to_string(node) +
                      " is not a node of the beam (0.." +
                      std::to_string(beam->properties().elements) + ")");
    }
    if (*point != Eigen::Vector3d::Zero()) {
      Fail(label,
           std::string(point_field) + " must be zero with " + field + ", got " + Vec(*point));
    }
  }
  model_.springs_.push_back(spring);
  return static_cast<int>(model_.springs_.size()) - 1;
}

int SpatialModelBuilder::AddTorsionalSpring(const SpatialTorsionalSpring& spring) {
  RequireName("torsional spring", spring.name, model_.torsional_.size());
  const std::string label = Label("torsional spring", spring.name);
  RequireUniqueName(label, spring.name, model_.torsional_);
  if (spring.joint < 0 || spring.joint >= static_cast<int>(model_.joints_.size())) {
    Fail(label, "unknown joint index " + std::to_string(spring.joint));
  }
  const SpatialJoint& joint = model_.joints_[static_cast<std::size_t>(spring.joint)];
  if (joint.type != SpatialJointType::kRevolute) {
    Fail(label, "needs a revolute joint, joint '" + joint.name + "' is not one");
  }
  RequireNonNegative(label, "stiffness", spring.stiffness);
  RequireNonNegative(label, "damping", spring.damping);
  RequireFinite(label, "angle0", spring.angle0);
  model_.torsional_.push_back(spring);
  return static_cast<int>(model_.torsional_.size()) - 1;
}

int SpatialModelBuilder::AddLoad(const SpatialLoad& load) {
  RequireName("load", load.name, model_.loads_.size());
  const std::string label = Label("load", load.name);
  RequireUniqueName(label, load.name, model_.loads_);
  RequireBody(label, "body", load.body, model_.num_bodies(), false);
  RequireFiniteVec(label, "force", load.force);
  RequireFiniteVec(label, "point", load.point);
  RequireFiniteVec(label, "torque", load.torque);
  if (load.node != -1) {
    const SpatialFlexibleBeam* beam = model_.beams_[static_cast<std::size_t>(load.body)].get();
    if (beam == nullptr) Fail(label, "node needs a flexible body");
    if (load.node < 0 || load.node > beam->properties().elements) {
      Fail(label, "node " + std::to_string(load.node) + " is not a node of the beam (0.." +
                      std::to_string(beam->properties().elements) + ")");
    }
    if (load.point != Eigen::Vector3d::Zero()) {
      Fail(label, "point must be zero with node, got " + Vec(load.point));
    }
  }
  if (load.scale) ValidateProfile(label, *load.scale);
  model_.loads_.push_back(load);
  return static_cast<int>(model_.loads_.size()) - 1;
}

int SpatialModelBuilder::AddPrismaticFriction(const SpatialPrismaticFriction& friction) {
  RequireName("prismatic friction", friction.name, model_.frictions_.size());
  const std::string label = Label("prismatic friction", friction.name);
  RequireUniqueName(label, friction.name, model_.frictions_);
  if (friction.joint < 0 || friction.joint >= static_cast<int>(model_.joints_.size())) {
    Fail(label, "unknown joint index " + std::to_string(friction.joint));
  }
  const SpatialJoint& joint = model_.joints_[static_cast<std::size_t>(friction.joint)];
  if (joint.type != SpatialJointType::kPrismatic) {
    Fail(label, "needs a prismatic joint, joint '" + joint.name + "' is not one");
  }
  RequireNonNegative(label, "mu", friction.mu);
  model_.frictions_.push_back(friction);
  return static_cast<int>(model_.frictions_.size()) - 1;
}

void SpatialModelBuilder::SetForceCallback(ForceCallback callback) {
  model_.callback_ = std::move(callback);
}

void SpatialModelBuilder::SetGravity(const Eigen::Vector3d& g) {
  if (!g.allFinite()) throw std::invalid_argument("gravity must be finite, got " + Vec(g));
  model_.gravity_ = g;
}

std::shared_ptr<const SpatialModel> SpatialModelBuilder::Build() {
  if (model_.num_bodies() == 0) throw std::invalid_argument("spatial model: no bodies were added");
  return std::make_shared<const SpatialModel>(model_);
}

// ---- SpatialMultibodySystem ---------------------------------------------------------------------

SpatialMultibodySystem::SpatialMultibodySystem(std::shared_ptr<const SpatialModel> model)
    : model_(std::move(model)) {
  if (!model_) throw std::invalid_argument("SpatialMultibodySystem: null model");
  friction_normal_.assign(model_->prismatic_frictions().size(), 0.0);
  if (model_->has_flexible_bodies()) constant_mass_ = false;
  for (const SpatialBody& body : model_->bodies()) {
    if (body.com != Eigen::Vector3d::Zero()) constant_mass_ = false;
    const Eigen::Vector3d& c = body.com;
    BodyInertia inertia;
    inertia.J_o = body.inertia +
                  body.mass * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
    inertia.com = c;
    inertia.mass = body.mass;
    inertia_.push_back(inertia);
  }
  auto block = std::make_shared<const SpatialJointBlock>(model_);
  num_joint_rows_ = block->num_rows();
  joint_rows_.resize(model_->joints().size());
  for (int r = 0; r < block->num_rows(); ++r) {
    joint_rows_[static_cast<std::size_t>(block->row(r).joint)].push_back(r);
  }
  joint_block_ = block;
  AddConstraintBlock(block);  // first block: local rows are global rows
}

bool SpatialMultibodySystem::BlockSparseMatrices(double t, const Eigen::VectorXd& q,
                                                 std::span<const int> rows, MassBlocks* M,
                                                 BlockSparseRows* G) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::BlockSparseMatrices");
  if (model_->has_flexible_bodies()) return false;  // blocks of 6 + m: the dense path
  // Rigid only: one 6-block per body, block i at columns VOffset(i) = 6 i (BlockSparseRows
  // addresses block b at columns 6 b). A flexible body would need blocks of its own width
  // (6 + m), i.e. variable block sizes in MassBlocks and BlockSparseRows.
  if (M != nullptr) {
    M->block_size = 6;
    M->blocks.resize(6, nv());
    for (int i = 0; i < model_->num_bodies(); ++i) {
      const SpatialBody& body = model_->bodies()[static_cast<std::size_t>(i)];
      const double m = body.mass;
      const Eigen::Vector3d& c = body.com;
      auto block = M->blocks.middleCols<6>(model_->VOffset(i));
      block.setZero();
      block.block<3, 3>(0, 0).diagonal().setConstant(m);
      block.block<3, 3>(3, 3) =
          body.inertia + m * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
      if (c != Eigen::Vector3d::Zero()) {
        const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(model_->QOffset(i) + 3));
        const Eigen::Matrix3d coupling = -m * R * Skew(c);
        block.block<3, 3>(0, 3) = coupling;
        block.block<3, 3>(3, 0) = coupling.transpose();
      }
    }
  }
  if (G != nullptr) {
    const auto& joints = static_cast<const SpatialJointBlock&>(*joint_block_);
    G->Clear(6, nv());
    thread_local Eigen::MatrixXd dense_row;
    RotationCache& cache = ThreadRotationCache();
    cache.Begin(q, *model_);
    for (const int r : rows) {
      if (r >= 0 && r < num_joint_rows_) {
        joints.AppendBlocks(t, q, r, cache, G);
      } else if (!AppendConstraintJacobianBlocks(t, q, r, G)) {  // throws if r invalid
        ConstraintJacobian(t, q, std::span<const int>(&r, 1), &dense_row);
        G->AppendDenseRow(dense_row.row(0));
      }
    }
  }
  return true;
}

void SpatialMultibodySystem::MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::MassMatrix");
  M->setZero(nv(), nv());
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const SpatialBody& body = model_->bodies()[static_cast<std::size_t>(i)];
    const double m = body.mass;
    const Eigen::Vector3d& c = body.com;
    const int v0 = model_->VOffset(i);
    if (const SpatialFlexibleBeam* beam = model_->beam(i)) {
      const int n = 6 + beam->num_modes();
      beam->MassMatrix(QuaternionToRotation(q.segment<4>(model_->QOffset(i) + 3)),
                       q.segment(model_->QOffset(i) + 7, beam->num_modes()),
                       M->block(v0, v0, n, n));
      continue;
    }
    M->block<3, 3>(v0, v0).diagonal().setConstant(m);
    M->block<3, 3>(v0 + 3, v0 + 3) =
        body.inertia + m * (c.squaredNorm() * Eigen::Matrix3d::Identity() - c * c.transpose());
    if (c != Eigen::Vector3d::Zero()) {
      const Eigen::Matrix3d R = QuaternionToRotation(q.segment<4>(model_->QOffset(i) + 3));
      const Eigen::Matrix3d coupling = -m * R * Skew(c);  // ∂v_c/∂ω scaled by m
      M->block<3, 3>(v0, v0 + 3) = coupling;
      M->block<3, 3>(v0 + 3, v0) = coupling.transpose();
    }
  }
}

void SpatialMultibodySystem::Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                    Eigen::VectorXd* F) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::Forces");
  CheckSize(v, nv(), "v", "SpatialMultibodySystem::Forces");
  F->setZero(nv());
  const Eigen::Vector3d& gravity = model_->gravity();
  RotationCache& cache = ThreadRotationCache();  // R shared with G and γ at the same q
  cache.Begin(q, *model_);
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const BodyInertia& body = inertia_[static_cast<std::size_t>(i)];
    const BodyKin k = KinOf(*model_, i, q, v, cache);
    if (const SpatialFlexibleBeam* beam = model_->beam(i)) {
      const int m = beam->num_modes();
      beam->AddForces(k.R, q.segment(model_->QOffset(i) + 7, m), k.omega, v.segment(k.v0 + 6, m),
                      gravity, F->segment(k.v0, 6 + m));
      continue;
    }
    const Eigen::Vector3d& c = body.com;
    // Gravity at the centre of mass, gyroscopic and centripetal terms.
    AddWrench(k, c, body.mass * gravity, Eigen::Vector3d::Zero(), F);
    F->segment<3>(k.v0) -= body.mass * (k.R * k.omega.cross(k.omega.cross(c)));
    F->segment<3>(k.v0 + 3) -= k.omega.cross(body.J_o * k.omega);
  }
  for (const SpatialLoad& load : model_->loads()) {
    const double scale = load.scale ? load.scale->Evaluate(t)(0) : 1.0;
    if (load.node >= 0) {  // at the node, the torque on its section
      const SpatialJointSide side = SideOf(*model_, load.body, load.node, Eigen::Vector3d::Zero(),
                                           Eigen::Matrix3d::Identity(), q, nullptr);
      side.AddPointJacobian(scale * load.force, F->transpose());
      side.AddRotationJacobian(scale * load.torque, F->transpose());
      continue;
    }
    AddWrench(KinOf(*model_, load.body, q), load.point, scale * load.force, scale * load.torque, F);
  }
  for (const SpatialSpringDamper& spring : model_->springs()) {
    if (spring.node_a >= 0 || spring.node_b >= 0) {
      // The ends as joint sides (a node's section point at its arm, or a body point): the same
      // force, through each end's point Jacobian.
      const SpatialJointSide a = SpringEnd(*model_, spring, false, q, &v);
      const SpatialJointSide b = SpringEnd(*model_, spring, true, q, &v);
      const Eigen::Vector3d f_b =
          SpringForceOnB(spring, b.point - a.point, b.point_rate - a.point_rate);
      b.AddPointJacobian(f_b, F->transpose());
      a.AddPointJacobian(-f_b, F->transpose());
      continue;
    }
    const BodyKin a = KinOf(*model_, spring.body_a, q, v);
    const BodyKin b = KinOf(*model_, spring.body_b, q, v);
    const Eigen::Vector3d f_b =
        SpringForceOnB(spring, b.Point(spring.point_b) - a.Point(spring.point_a),
                       b.PointRate(spring.point_b) - a.PointRate(spring.point_a));
    AddWrench(b, spring.point_b, f_b, Eigen::Vector3d::Zero(), F);
    AddWrench(a, spring.point_a, -f_b, Eigen::Vector3d::Zero(), F);
  }
  for (const SpatialTorsionalSpring& spring : model_->torsional_springs()) {
    const SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(spring.joint)];
    if (joint.node_a >= 0 || joint.node_b >= 0) {
      // The sections' frames: the torque τ n on b's frame, −τ n on a's (their generalized forces
      // load ω and, at a node, the slopes and the twist through Eᵀ).
      const SpatialJointSide a = JointSideOf(*model_, spring.joint, false, q, &v);
      const SpatialJointSide b = JointSideOf(*model_, spring.joint, true, q, &v);
      const RevoluteAngle angle = AngleOf(a, b);
      const double tau =
          -spring.stiffness * (angle.theta - spring.angle0) - spring.damping * angle.theta_dot;
      b.AddRotationJacobian(tau * angle.n, F->transpose());
      a.AddRotationJacobian(-tau * angle.n, F->transpose());
      continue;
    }
    const JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(spring.joint)];
    const BodyKin a = KinOf(*model_, joint.body_a, q, v);
    const BodyKin b = KinOf(*model_, joint.body_b, q, v);
    const RevoluteAngle angle = AngleOf(f, a, b);
    const double tau =
        -spring.stiffness * (angle.theta - spring.angle0) - spring.damping * angle.theta_dot;
    AddWrench(b, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), tau * angle.n, F);
    AddWrench(a, Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), -tau * angle.n, F);
  }
  for (std::size_t i = 0; i < model_->prismatic_frictions().size(); ++i) {
    const SpatialPrismaticFriction& fr = model_->prismatic_frictions()[i];
    const SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(fr.joint)];
    if (joint.node_a >= 0 || joint.node_b >= 0) {
      // The joint points of the sections and a's section axis: f_b = −μ N sign(u) z_a at p_b.
      const SpatialJointSide a = JointSideOf(*model_, fr.joint, false, q, &v);
      const SpatialJointSide b = JointSideOf(*model_, fr.joint, true, q, &v);
      const Eigen::Vector3d axis = a.axes.col(2);
      const double u = axis.dot(b.point_rate - a.point_rate);
      const double sign = u > 0 ? 1.0 : (u < 0 ? -1.0 : 0.0);
      const Eigen::Vector3d f_b = -fr.mu * friction_normal_[i] * sign * axis;
      b.AddPointJacobian(f_b, F->transpose());
      a.AddPointJacobian(-f_b, F->transpose());
      continue;
    }
    const JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(fr.joint)];
    const BodyKin a = KinOf(*model_, joint.body_a, q, v);
    const BodyKin b = KinOf(*model_, joint.body_b, q, v);
    const Eigen::Vector3d axis = a.R * f.axes_a.col(2);
    const double u = axis.dot(b.PointRate(f.point_b) - a.PointRate(f.point_a));
    const double sign = u > 0 ? 1.0 : (u < 0 ? -1.0 : 0.0);
    const Eigen::Vector3d f_b = -fr.mu * friction_normal_[i] * sign * axis;
    AddWrench(b, f.point_b, f_b, Eigen::Vector3d::Zero(), F);
    AddWrench(a, f.point_a, -f_b, Eigen::Vector3d::Zero(), F);
  }
  if (model_->force_callback()) {
    model_->force_callback()(t, q, v, F);
    if (F->size() != nv()) {
      throw std::invalid_argument("SpatialMultibodySystem: the force callback resized F to " +
                                  std::to_string(F->size()) +
                                  ", expected nv = " + std::to_string(nv()));
    }
  }
}

void SpatialMultibodySystem::IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                               double h, Eigen::VectorXd* q_next) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::IntegratePosition");
  CheckSize(v, nv(), "v", "SpatialMultibodySystem::IntegratePosition");
  if (q_next != &q) *q_next = q;
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const int q0 = model_->QOffset(i), v0 = model_->VOffset(i);
    q_next->segment<3>(q0) += h * v.segment<3>(v0);
    const Eigen::Vector4d Q = q_next->segment<4>(q0 + 3);
    q_next->segment<4>(q0 + 3) = QuaternionMultiply(Q, QuaternionExp(h * v.segment<3>(v0 + 3)));
    if (const SpatialFlexibleBeam* beam = model_->beam(i)) {
      const int m = beam->num_modes();
      q_next->segment(q0 + 7, m) += h * v.segment(v0 + 6, m);
    }
  }
}

bool SpatialMultibodySystem::PositionDifference(const Eigen::VectorXd& q,
                                                const Eigen::VectorXd& q_base,
                                                Eigen::VectorXd* theta) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::PositionDifference");
  CheckSize(q_base, nq(), "q_base", "SpatialMultibodySystem::PositionDifference");
  theta->resize(nv());
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const int q0 = model_->QOffset(i), v0 = model_->VOffset(i);
    theta->segment<3>(v0) = q.segment<3>(q0) - q_base.segment<3>(q0);
    // Q_base⁻¹ = conjugate (unit quaternions); Log returns the shortest rotation vector.
    const Eigen::Vector4d Qb = q_base.segment<4>(q0 + 3);
    const Eigen::Vector4d Qb_conj(Qb(0), -Qb(1), -Qb(2), -Qb(3));
    theta->segment<3>(v0 + 3) = QuaternionLog(QuaternionMultiply(Qb_conj, q.segment<4>(q0 + 3)));
    if (const SpatialFlexibleBeam* beam = model_->beam(i)) {
      const int m = beam->num_modes();
      theta->segment(v0 + 6, m) = q.segment(q0 + 7, m) - q_base.segment(q0 + 7, m);
    }
  }
  return true;
}

void SpatialMultibodySystem::DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
                                     Eigen::VectorXd* theta_dot) const {
  CheckSize(theta, nv(), "theta", "SpatialMultibodySystem::DexpInv");
  CheckSize(v, nv(), "v", "SpatialMultibodySystem::DexpInv");
  *theta_dot = v;
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const int v0 = model_->VOffset(i);
    const Eigen::Vector3d th = theta.segment<3>(v0 + 3);
    const Eigen::Vector3d w = v.segment<3>(v0 + 3);
    const double a = th.norm();
    // c(a) = 1/a² − (1 + cos a)/(2 a sin a) = 1/12 + a²/720 + a⁴/30240 + …; the series is used
    // below a = 1e-2, where its truncation (a⁶/1209600 ≈ 1e-18) is below round-off.
    const double c = a < 1e-2 ? 1.0 / 12.0 + a * a / 720.0 + a * a * a * a / 30240.0
                              : 1.0 / (a * a) - (1.0 + std::cos(a)) / (2.0 * a * std::sin(a));
    const Eigen::Vector3d tw = th.cross(w);
    theta_dot->segment<3>(v0 + 3) = w + 0.5 * tw + c * th.cross(tw);
  }
}

double SpatialMultibodySystem::PotentialEnergy(double /*t*/, const Eigen::VectorXd& q) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::PotentialEnergy");
  double V = 0.0;
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const SpatialBody& body = model_->bodies()[static_cast<std::size_t>(i)];
    if (const SpatialFlexibleBeam* beam = model_->beam(i)) {
      const BodyKin k = KinOf(*model_, i, q);
      V += beam->PotentialEnergy(k.r, k.R, q.segment(model_->QOffset(i) + 7, beam->num_modes()),
                                 model_->gravity());
      continue;
    }
    V -= body.mass * model_->gravity().dot(KinOf(*model_, i, q).Point(body.com));
  }
  for (const SpatialLoad& load : model_->loads()) {
    if (load.scale) continue;
    if (load.node >= 0) {
      V -= load.force.dot(SideOf(*model_, load.body, load.node, Eigen::Vector3d::Zero(),
                                 Eigen::Matrix3d::Identity(), q, nullptr)
                              .point);
      continue;
    }
    V -= load.force.dot(KinOf(*model_, load.body, q).Point(load.point));
  }
  for (const SpatialSpringDamper& spring : model_->springs()) {
    const Eigen::Vector3d d =
        spring.node_a >= 0 || spring.node_b >= 0
            ? Eigen::Vector3d(SpringEnd(*model_, spring, true, q, nullptr).point -
                              SpringEnd(*model_, spring, false, q, nullptr).point)
            : Eigen::Vector3d(KinOf(*model_, spring.body_b, q).Point(spring.point_b) -
                              KinOf(*model_, spring.body_a, q).Point(spring.point_a));
    const double stretch = d.norm() - spring.rest_length;
    V += 0.5 * spring.stiffness * stretch * stretch;
  }
  for (const SpatialTorsionalSpring& spring : model_->torsional_springs()) {
    const SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(spring.joint)];
    const RevoluteAngle angle =
        joint.node_a >= 0 || joint.node_b >= 0
            ? AngleOf(JointSideOf(*model_, spring.joint, false, q, nullptr),
                      JointSideOf(*model_, spring.joint, true, q, nullptr))
            : AngleOf(model_->joint_frames()[static_cast<std::size_t>(spring.joint)],
                      KinOf(*model_, joint.body_a, q), KinOf(*model_, joint.body_b, q));
    const double stretch = angle.theta - spring.angle0;
    V += 0.5 * spring.stiffness * stretch * stretch;
  }
  return V;
}

namespace {

// The body whose coordinates hold entry i of q or v, given the ascending first entries offset(b)
// of the bodies (QOffset or VOffset): the last b with offset(b) ≤ i (bisection).
template <class Offset>
int BodyHolding(int i, int num_bodies, Offset offset) {
  int lo = 0, hi = num_bodies;  // offset(lo) ≤ i < offset(hi), offset(num_bodies) = size
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (offset(mid) <= i) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

}  // namespace

std::string SpatialMultibodySystem::PositionName(int i) const {
  static constexpr const char* kSuffix[7] = {".x", ".y", ".z", ".qw", ".qx", ".qy", ".qz"};
  if (i < 0 || i >= nq()) {
    throw std::out_of_range("SpatialMultibodySystem: position index " + std::to_string(i) +
                            " outside [0, " + std::to_string(nq()) + ")");
  }
  const int body = BodyHolding(i, model_->num_bodies(), [&](int b) { return model_->QOffset(b); });
  const int local = i - model_->QOffset(body);
  const std::string& name = model_->bodies()[static_cast<std::size_t>(body)].name;
  return local < SpatialModel::kRigidNq ? name + kSuffix[local]
                                        : name + ".eta" + std::to_string(local - 6);
}

std::string SpatialMultibodySystem::VelocityName(int i) const {
  static constexpr const char* kSuffix[6] = {".vx", ".vy", ".vz", ".wx", ".wy", ".wz"};
  if (i < 0 || i >= nv()) {
    throw std::out_of_range("SpatialMultibodySystem: velocity index " + std::to_string(i) +
                            " outside [0, " + std::to_string(nv()) + ")");
  }
  const int body = BodyHolding(i, model_->num_bodies(), [&](int b) { return model_->VOffset(b); });
  const int local = i - model_->VOffset(body);
  const std::string& name = model_->bodies()[static_cast<std::size_t>(body)].name;
  return local < SpatialModel::kRigidNv ? name + kSuffix[local]
                                        : name + ".veta" + std::to_string(local - 5);
}

std::vector<JointReaction> SpatialMultibodySystem::JointReactions(
    double t, const Eigen::VectorXd& q, std::span<const int> rows,
    const Eigen::VectorXd& lambda) const {
  CheckSize(q, nq(), "q", "SpatialMultibodySystem::JointReactions");
  if (lambda.size() != static_cast<Eigen::Index>(rows.size())) {
    throw std::invalid_argument("JointReactions: lambda has size " + std::to_string(lambda.size()) +
                                ", expected " + std::to_string(rows.size()));
  }
  std::vector<JointReaction> out(model_->joints().size());
  std::vector<int> joint_rows;
  std::vector<Eigen::Index> positions;
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] >= 0 && rows[k] < num_joint_rows_) {
      joint_rows.push_back(rows[k]);
      positions.push_back(static_cast<Eigen::Index>(k));
    }
  }
  if (joint_rows.empty()) return out;
  Eigen::MatrixXd G;
  ConstraintJacobian(t, q, joint_rows, &G);
  for (std::size_t j = 0; j < out.size(); ++j) {
    const SpatialJoint& joint = model_->joints()[j];
    const JointFrames& f = model_->joint_frames()[j];
    Eigen::VectorXd lambda_j = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(joint_rows.size()));
    bool any = false;
    for (int r : joint_rows_[j]) {
      for (std::size_t k = 0; k < joint_rows.size(); ++k) {
        if (joint_rows[k] == r) {
          lambda_j(static_cast<Eigen::Index>(k)) = lambda(positions[k]);
          any = true;
        }
      }
    }
    if (!any) continue;
    const Eigen::VectorXd Q = G.transpose() * lambda_j;  // generalized force Gᵀλ
    auto reduce = [&](int body, const Eigen::Vector3d& s, Eigen::Vector3d* force,
                      Eigen::Vector3d* torque) {
      if (body == kGround) return;
      const BodyKin k = KinOf(*model_, body, q);
      *force = Q.segment<3>(k.v0);
      // Moment about the body origin (body frame) n̄_o = n̄_p + s̄ × Rᵀ f.
      const Eigen::Vector3d n_o = Q.segment<3>(k.v0 + 3);
      *torque = k.R * (n_o - s.cross(k.R.transpose() * *force));
    };
    reduce(joint.body_a, f.point_a, &out[j].force_on_a, &out[j].torque_on_a);
    reduce(joint.body_b, f.point_b, &out[j].force_on_b, &out[j].torque_on_b);
  }
  return out;
}

void SpatialMultibodySystem::AcceptStep(double t, const Eigen::VectorXd& q,
                                        const Eigen::VectorXd& v, std::span<const int> rows,
                                        const Eigen::VectorXd& lambda) const {
  (void)v;
  if (model_->prismatic_frictions().empty()) return;
  const std::vector<JointReaction> reactions = JointReactions(t, q, rows, lambda);
  for (std::size_t i = 0; i < model_->prismatic_frictions().size(); ++i) {
    const int j = model_->prismatic_frictions()[i].joint;
    const SpatialJoint& joint = model_->joints()[static_cast<std::size_t>(j)];
    const JointFrames& f = model_->joint_frames()[static_cast<std::size_t>(j)];
    const Eigen::Vector3d axis =
        joint.node_a >= 0 || joint.node_b >= 0
            ? Eigen::Vector3d(JointSideOf(*model_, j, false, q, nullptr).axes.col(2))
            : Eigen::Vector3d(KinOf(*model_, joint.body_a, q).R * f.axes_a.col(2));
    const Eigen::Vector3d& force = reactions[static_cast<std::size_t>(j)].force_on_b;
    friction_normal_[i] = (force - axis.dot(force) * axis).norm();
  }
}

}  // namespace saltus::engine
