#include "engine/planar_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "engine/validation.h"

namespace saltus::engine {
namespace {

using namespace validation;  // NOLINT: shared builder checks (engine/validation.h)

// ---- Planar kinematics --------------------------------------------------------------------

// Rotation by +π/2: perp(s) = R(π/2) s = (−s_y, s_x), so d(R(θ) s)/dθ = perp(R(θ) s).
Eigen::Vector2d Perp(const Eigen::Vector2d& s) { return {-s.y(), s.x()}; }
Eigen::Vector2d Rotate(double theta, const Eigen::Vector2d& s) {
  const double c = std::cos(theta);
  const double sn = std::sin(theta);
  return {c * s.x() - sn * s.y(), sn * s.x() + c * s.y()};
}

// Pose and velocity of one body's frame, the ground being the fixed frame (r = 0, θ = 0).
struct BodyState {
  Eigen::Vector2d r = Eigen::Vector2d::Zero();
  Eigen::Vector2d r_dot = Eigen::Vector2d::Zero();
  double theta = 0.0;
  double omega = 0.0;
};
BodyState StateOf(const PlanarModel& model, int body, const Eigen::VectorXd& q) {
  BodyState s;
  if (body == kGround) return s;
  const int i = model.Offset(body);
  s.r = q.segment<2>(i);
  s.theta = q(i + 2);
  return s;
}
BodyState StateOf(const PlanarModel& model, int body, const Eigen::VectorXd& q,
                  const Eigen::VectorXd& v) {
  BodyState s = StateOf(model, body, q);
  if (body == kGround || v.size() == 0) return s;
  const int i = model.Offset(body);
  s.r_dot = v.segment<2>(i);
  s.omega = v(i + 2);
  return s;
}

// A body-fixed point: s_w = R(θ) s, p = r + s_w, ṗ = ṙ + ω perp(s_w).
struct PointState {
  Eigen::Vector2d s_w;
  Eigen::Vector2d p;
  Eigen::Vector2d p_dot;
};
PointState PointOf(const BodyState& body, const Eigen::Vector2d& s) {
  PointState point;
  point.s_w = Rotate(body.theta, s);
  point.p = body.r + point.s_w;
  point.p_dot = body.r_dot + body.omega * Perp(point.s_w);
  return point;
}

// Adds the generalized force of a world force f applied at a point: (f, perp(s_w)·f) on
// (x, y, θ) and, at a node of a flexible body, jac_etaᵀ f on η.
void AddPointForce(const PlanarPointState& point, const Eigen::Vector2d& f, Eigen::VectorXd* F) {
  if (point.column < 0) return;
  F->segment<2>(point.column) += f;
  (*F)(point.column + 2) += Perp(point.s_w).dot(f);
  if (point.elastic())
    F->segment(point.column + 3, point.jac_eta.cols()) += point.jac_eta.transpose() * f;
}
// Adds a torque τ on a point's section: τ on θ and, at a node, ψᵀ τ on η.
void AddPointTorque(const PlanarPointState& point, double torque, Eigen::VectorXd* F) {
  if (point.column < 0) return;
  (*F)(point.column + 2) += torque;
  if (point.elastic())
    F->segment(point.column + 3, point.slope.size()) += point.slope.transpose() * torque;
}

// The factor φ(t) of a load (1 without a profile).
double LoadScale(const PlanarLoad& load, double t) {
  return load.scale ? load.scale->Evaluate(t)(0) : 1.0;
}

// Relative angle θ_b − θ_a − θ₀ and rate θ̇_b − θ̇_a of a torsional spring's revolute joint (the
// rate is 0 when v is empty). At a node the side's angle is its section's, θ + ψ η (rate
// ω + ψ η̇), and `a`, `b` hold the sides' points, so that the torque acts on the section (ψᵀ τ
// on η, AddPointTorque): it derives from ½ k (θ_b − θ_a − θ₀)² with these angles.
struct TorsionalState {
  int body_a = kGround;
  int body_b = kGround;
  double angle = 0.0;
  double rate = 0.0;
  bool at_node = false;
  PlanarPointState a, b;  // when at_node
};
TorsionalState TorsionalOf(const PlanarModel& model, const PlanarTorsionalSpring& spring,
                           const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  const PlanarJoint& joint = model.joints()[static_cast<std::size_t>(spring.joint)];
  TorsionalState s;
  s.body_a = joint.body_a;
  s.body_b = joint.body_b;
  if (joint.node_a >= 0 || joint.node_b >= 0) {
    s.at_node = true;
    s.a = model.Point(joint.body_a, joint.node_a, Eigen::Vector2d::Zero(), q, v);
    s.b = model.Point(joint.body_b, joint.node_b, Eigen::Vector2d::Zero(), q, v);
    s.angle = s.b.angle - s.a.angle - spring.angle0;
    s.rate = s.b.angle_rate - s.a.angle_rate;
    return s;
  }
  const auto angle_of = [&](int body, const Eigen::VectorXd& x) {
    return body == kGround ? 0.0 : x(model.Offset(body) + 2);
  };
  s.angle = angle_of(joint.body_b, q) - angle_of(joint.body_a, q) - spring.angle0;
  if (v.size() > 0) s.rate = angle_of(joint.body_b, v) - angle_of(joint.body_a, v);
  return s;
}

// ---- Joint constraint block ---------------------------------------------------------------

enum class JointRow {
  kRevoluteX,
  kRevoluteY,
  kAngle,               // θ_b − θ_a − θ₀ (− ω t for an angle_driver joint)
  kNormal,              // n_a · d (prismatic, point_on_line)
  kDistance,            // (d·d − L²)/(2L)
  kDriverAngle,         // θ_b − θ_a − φ(t)
  kDriverDisplacement,  // u_w · d − s(t)
};

// Where a joint's two points are taken from: the first coordinate of each body in q and v (−1
// for the ground) and whether both points are frame points (node < 0), fixed in their bodies.
struct JointSides {
  int column_a = -1;
  int column_b = -1;
  bool frame_points = true;
};

// A point s fixed in the frame of the body whose (x, y, θ) start at `column` of q and v (−1: the
// ground, s a world point): s_w = R(θ) s, p = r + s_w, ṗ = ṙ + ω perp(s_w) (v may be empty:
// ṗ = 0), and the point's angle and rate are the body's. The values PlanarModel::Point gives
// (the same operations on the same numbers), written in place without the body look-up: the
// block knows its columns from construction (the builder validated the body indices).
void FramePointInPlace(int column, const Eigen::Vector2d& s, const Eigen::VectorXd& q,
                       const Eigen::VectorXd& v, PlanarPointState* point) {
  if (point->elastic()) {  // the previous joint's point was a node of a flexible body
    point->jac_eta.resize(2, 0);
    point->slope.resize(0);
    point->a_elastic.setZero();
  }
  point->column = column;
  if (column < 0) {
    point->s_w = s;
    point->p = s;
    point->p_dot.setZero();
    point->angle = 0.0;
    point->angle_rate = 0.0;
    return;
  }
  const Eigen::Index i = column;
  point->angle = q(i + 2);
  point->s_w = Rotate(point->angle, s);
  point->p = q.segment<2>(i) + point->s_w;
  if (v.size() == 0) {
    point->angle_rate = 0.0;
    point->p_dot.setZero();
  } else {
    point->angle_rate = v(i + 2);
    point->p_dot = v.segment<2>(i) + point->angle_rate * Perp(point->s_w);
  }
}

// The rows of all joints of a model, in joint order, then one row per driver; G, γ and ∂g/∂t are
// analytic (derivations next to each row type below and in the header).
// The two points of a joint at (q, v), kept from one row to the next: the rows of a joint are
// consecutive in a row list (a revolute joint's x and y rows), and each point costs a sin/cos.
// Within one Values/Jacobian/Gamma call (q and v fixed), so the values are those of Point. With
// them the frame angle of body a and the angular rates of both frames (θ_a, ω_a, ω_b: the
// point's own angle and rate differ from the frame's at a node of a flexible body).
struct JointPoints {
  int joint = -1;
  PlanarPointState a, b;
  double theta_a = 0.0, omega_a = 0.0, omega_b = 0.0;
  void At(const PlanarModel& model, const JointSides& sides, int j, const Eigen::VectorXd& q,
          const Eigen::VectorXd& v) {
    if (j == joint) return;
    const PlanarJoint& pj = model.joints()[static_cast<std::size_t>(j)];
    if (sides.frame_points) {
      FramePointInPlace(sides.column_a, pj.point_a, q, v, &a);
      FramePointInPlace(sides.column_b, pj.point_b, q, v, &b);
      theta_a = a.angle;
      omega_a = a.angle_rate;
      omega_b = b.angle_rate;
    } else {
      a = model.Point(pj.body_a, pj.node_a, pj.point_a, q, v);
      b = model.Point(pj.body_b, pj.node_b, pj.point_b, q, v);
      const auto frame = [&](int column, const Eigen::VectorXd& x) {
        return column < 0 || x.size() == 0 ? 0.0 : x(column + 2);
      };
      theta_a = frame(sides.column_a, q);
      omega_a = frame(sides.column_a, v);
      omega_b = frame(sides.column_b, v);
    }
    joint = j;
  }
};

class PlanarJointBlock : public ConstraintBlock {
 public:
  explicit PlanarJointBlock(std::shared_ptr<const PlanarModel> model) : model_(std::move(model)) {
    const auto& joints = model_->joints();
    for (std::size_t j = 0; j < joints.size(); ++j) {
      const std::string& name = joints[j].name;
      const int index = static_cast<int>(j);
      const auto column = [&](int body) { return body == kGround ? -1 : model_->Offset(body); };
      sides_.push_back({column(joints[j].body_a), column(joints[j].body_b),
                        joints[j].node_a < 0 && joints[j].node_b < 0});
      switch (joints[j].type) {
        case PlanarJointType::kRevolute:
          AddRow(index, JointRow::kRevoluteX, name + ".x");
          AddRow(index, JointRow::kRevoluteY, name + ".y");
          break;
        case PlanarJointType::kPrismatic:
          AddRow(index, JointRow::kAngle, name + ".angle");
          AddRow(index, JointRow::kNormal, name + ".normal");
          break;
        case PlanarJointType::kAngleDriver:
          AddRow(index, JointRow::kAngle, name + ".angle");
          break;
        case PlanarJointType::kDistance:
          AddRow(index, JointRow::kDistance, name + ".distance");
          break;
        case PlanarJointType::kFixed:
          AddRow(index, JointRow::kRevoluteX, name + ".x");
          AddRow(index, JointRow::kRevoluteY, name + ".y");
          AddRow(index, JointRow::kAngle, name + ".angle");
          break;
        case PlanarJointType::kPointOnLine:
          AddRow(index, JointRow::kNormal, name + ".normal");
          break;
      }
    }
    const auto& drivers = model_->drivers();
    for (std::size_t d = 0; d < drivers.size(); ++d) {
      AddRow(drivers[d].joint,
             drivers[d].kind == DriverKind::kAngle ? JointRow::kDriverAngle
                                                   : JointRow::kDriverDisplacement,
             drivers[d].name, &drivers[d]);
    }
    if (num_rows() != model_->num_joint_rows()) {
      throw std::logic_error("PlanarJointBlock: row count differs from PlanarModel::NumRows");
    }
  }

  int num_rows() const override { return static_cast<int>(rows_.size()); }
  const ConstraintRowInfo& row_info(int local_row) const override {
    return infos_.at(static_cast<std::size_t>(local_row));
  }

  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    CheckQ(q);
    const Eigen::VectorXd no_v;
    JointPoints points;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      points.At(*model_, SidesOf(row), row.joint, q, no_v);
      const PlanarPointState& pa = points.a;
      const PlanarPointState& pb = points.b;
      const double theta_a = points.theta_a;  // frame angle (axes)
      const Eigen::Vector2d d = pb.p - pa.p;
      double value = 0.0;
      switch (row.type) {
        case JointRow::kRevoluteX:
        case JointRow::kRevoluteY:
          // g = p_a − p_b = −d.
          value = row.type == JointRow::kRevoluteX ? -d.x() : -d.y();
          break;
        case JointRow::kAngle:
          // g = θ_b − θ_a − θ₀ (− ω t for a driver; rate is 0 for a prismatic joint).
          value = pb.angle - pa.angle - joint.angle0 - DriverRate(joint) * t;
          break;
        case JointRow::kNormal:
          // g = n · d, n = perp(R_a u_a).
          value = Perp(Rotate(theta_a, joint.axis_a)).dot(d);
          break;
        case JointRow::kDistance:
          value = (d.squaredNorm() - joint.length * joint.length) / (2.0 * joint.length);
          break;
        case JointRow::kDriverAngle:
          value = pb.angle - pa.angle - row.driver->profile.Evaluate(t)(0);
          break;
        case JointRow::kDriverDisplacement:
          value = Rotate(theta_a, joint.axis_a).dot(d) - row.driver->profile.Evaluate(t)(0);
          break;
      }
      g(static_cast<Eigen::Index>(k)) = value;
    }
  }

  void Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    CheckQ(q);
    G.setZero();
    const Eigen::VectorXd no_v;
    JointPoints points;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      points.At(*model_, SidesOf(row), row.joint, q, no_v);
      JacobianRow(row, points, G, static_cast<Eigen::Index>(k));
    }
  }

  void Gamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    CheckQ(q);
    JointPoints points;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      points.At(*model_, SidesOf(row), row.joint, q, v);
      gamma(static_cast<Eigen::Index>(k)) = GammaRow(t, row, points);
    }
  }

  // The points at (q, v) serve both: G reads only their positions (s_w, p), which do not depend
  // on v, so the numbers are those of Jacobian and Gamma.
  void JacobianAndGamma(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                        std::span<const int> rows, Eigen::Ref<Eigen::MatrixXd> G,
                        Eigen::Ref<Eigen::VectorXd> gamma) const override {
    CheckQ(q);
    G.setZero();
    JointPoints points;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      points.At(*model_, SidesOf(row), row.joint, q, v);
      JacobianRow(row, points, G, static_cast<Eigen::Index>(k));
      gamma(static_cast<Eigen::Index>(k)) = GammaRow(t, row, points);
    }
  }

  void TimeDerivative(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    CheckQ(q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      double value = 0.0;
      if (row.type == JointRow::kAngle) value = -DriverRate(joint);
      if (row.driver != nullptr) value = -row.driver->profile.Evaluate(t)(1);
      g_t(static_cast<Eigen::Index>(k)) = value;
    }
  }

 private:
  struct Row {
    int joint;
    JointRow type;
    const PlanarDriver* driver;  // driver rows: into model_->drivers() (the model is immutable)
  };
  const JointSides& SidesOf(const Row& row) const {
    return sides_[static_cast<std::size_t>(row.joint)];
  }

  // Row i of G for `row` from its joint's points (G zeroed by the caller).
  void JacobianRow(const Row& row, const JointPoints& points, Eigen::Ref<Eigen::MatrixXd> G,
                   Eigen::Index i) const {
    const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
    const PlanarPointState& pa = points.a;
    const PlanarPointState& pb = points.b;
    const double theta_a = points.theta_a;
    const int ca = pa.column;  // column of body a's x (−1 for the ground)
    const Eigen::Vector2d d = pb.p - pa.p;
    // A row c·d (c fixed) has G = (−c, −c·perp(s_wa)[, −cᵀ ∂p_a/∂η]) on a and the opposite
    // signs on b, since ḋ = ṗ_b − ṗ_a (PlanarPointState); rows whose c turns with body a add
    // (∂c/∂θ_a)·d on θ_a.
    const auto along = [&](const Eigen::Vector2d& c) {
      PlanarModel::AddPointRow(pa, -c, G, i);
      PlanarModel::AddPointRow(pb, c, G, i);
    };
    switch (row.type) {
      case JointRow::kRevoluteX:
      case JointRow::kRevoluteY:
        // g = −d along the x or y axis.
        along(row.type == JointRow::kRevoluteX ? Eigen::Vector2d(-1.0, 0.0)
                                               : Eigen::Vector2d(0.0, -1.0));
        break;
      case JointRow::kAngle:
      case JointRow::kDriverAngle:
        PlanarModel::AddAngleRow(pa, -1.0, G, i);
        PlanarModel::AddAngleRow(pb, 1.0, G, i);
        break;
      case JointRow::kNormal: {
        // ġ = ṅ·d + n·ḋ with ṅ = −ω_a u_w (u_w = R_a u_a, n = perp(u_w)).
        const Eigen::Vector2d u_w = Rotate(theta_a, joint.axis_a);
        along(Perp(u_w));
        if (ca >= 0) G(i, ca + 2) -= u_w.dot(d);
        break;
      }
      case JointRow::kDistance:
        // ġ = d·ḋ / L.
        along(d / joint.length);
        break;
      case JointRow::kDriverDisplacement: {
        // ġ = u̇_w·d + u_w·ḋ − ṡ with u̇_w = ω_a n.
        const Eigen::Vector2d u_w = Rotate(theta_a, joint.axis_a);
        along(u_w);
        if (ca >= 0) G(i, ca + 2) += Perp(u_w).dot(d);
        break;
      }
    }
  }

  // γ of `row` from its joint's points at (q, v).
  double GammaRow(double t, const Row& row, const JointPoints& points) const {
    const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
    const PlanarPointState& pa = points.a;
    const PlanarPointState& pb = points.b;
    const Eigen::Vector2d d = pb.p - pa.p;
    const Eigen::Vector2d d_dot = pb.p_dot - pa.p_dot;
    const double wa2 = points.omega_a * points.omega_a;
    const double wb2 = points.omega_b * points.omega_b;
    // v̇-free part of d̈: p̈ = r̈ + ω̇ perp(s_w) − ω² s_w (+ the elastic terms of nodes).
    Eigen::Vector2d d_ddot_free = wa2 * pa.s_w - wb2 * pb.s_w;
    if (pa.elastic() || pb.elastic()) d_ddot_free += pb.a_elastic - pa.a_elastic;
    switch (row.type) {
      case JointRow::kRevoluteX:
      case JointRow::kRevoluteY:
        // g = −d: γ = −ω_a² s_wa + ω_b² s_wb.
        return row.type == JointRow::kRevoluteX ? -d_ddot_free.x() : -d_ddot_free.y();
      case JointRow::kAngle:
        return 0.0;  // linear in θ, η and t
      case JointRow::kNormal: {
        // g̈ = n̈·d + 2 ṅ·ḋ + n·d̈ with n̈ = −ω̇_a u_w − ω_a² n; the v̇-free part is
        // γ = −ω_a² n·d − 2 ω_a u_w·ḋ + n·(ω_a² s_wa − ω_b² s_wb).
        const Eigen::Vector2d u_w = Rotate(points.theta_a, joint.axis_a);
        const Eigen::Vector2d n = Perp(u_w);
        return -wa2 * n.dot(d) - 2.0 * points.omega_a * u_w.dot(d_dot) + n.dot(d_ddot_free);
      }
      case JointRow::kDistance:
        // g̈ = (ḋ·ḋ + d·d̈)/L.
        return (d_dot.squaredNorm() + d.dot(d_ddot_free)) / joint.length;
      case JointRow::kDriverAngle:
        return -row.driver->profile.Evaluate(t)(2);
      case JointRow::kDriverDisplacement: {
        // g̈ = ü_w·d + 2 u̇_w·ḋ + u_w·d̈ − s̈ with u̇_w = ω_a n, ü_w = ω̇_a n − ω_a² u_w.
        const Eigen::Vector2d u_w = Rotate(points.theta_a, joint.axis_a);
        const Eigen::Vector2d n = Perp(u_w);
        return -wa2 * u_w.dot(d) + 2.0 * points.omega_a * n.dot(d_dot) + u_w.dot(d_ddot_free) -
               row.driver->profile.Evaluate(t)(2);
      }
    }
    return 0.0;
  }

  static double DriverRate(const PlanarJoint& joint) {
    return joint.type == PlanarJointType::kAngleDriver ? joint.rate : 0.0;
  }
  void AddRow(int joint, JointRow type, std::string name, const PlanarDriver* driver = nullptr) {
    rows_.push_back({joint, type, driver});
    ConstraintRowInfo info;
    info.kind = ConstraintKind::kBilateral;
    info.name = std::move(name);
    infos_.push_back(std::move(info));
  }
  void CheckQ(const Eigen::VectorXd& q) const {
    CheckSize(q, model_->num_coordinates(), "q", "planar joint constraints");
  }

  std::shared_ptr<const PlanarModel> model_;
  std::vector<Row> rows_;
  std::vector<ConstraintRowInfo> infos_;
  std::vector<JointSides> sides_;  // per joint
};

}  // namespace

// ---- PlanarModel --------------------------------------------------------------------------

int PlanarModel::Offset(int body) const {
  if (body < 0 || body >= num_bodies()) {
    throw std::out_of_range("PlanarModel::Offset: body index " + std::to_string(body) +
                            " outside [0, " + std::to_string(num_bodies()) + ")");
  }
  return offset_[static_cast<std::size_t>(body)];
}

PlanarPointState PlanarModel::Point(int body, int node, const Eigen::Vector2d& s,
                                    const Eigen::VectorXd& q, const Eigen::VectorXd& v) const {
  if (node >= 0 && body != kGround) {
    return BeamPointState(
        body, beam_nodes_[static_cast<std::size_t>(body)].at(static_cast<std::size_t>(node)), q, v);
  }
  const BodyState frame = StateOf(*this, body, q, v);
  PlanarPointState point;
  point.angle = frame.theta;
  point.angle_rate = frame.omega;
  if (body != kGround) point.column = Offset(body);
  const PointState rigid = PointOf(frame, s);
  point.s_w = rigid.s_w;
  point.p = rigid.p;
  point.p_dot = rigid.p_dot;
  return point;
}

PlanarPointState PlanarModel::BeamPointState(int body, const BeamPoint& at,
                                             const Eigen::VectorXd& q,
                                             const Eigen::VectorXd& v) const {
  const BodyState frame = StateOf(*this, body, q, v);
  PlanarPointState point;
  point.angle = frame.theta;
  point.angle_rate = frame.omega;
  point.column = Offset(body);
  if (beam(body) == nullptr) {
    throw std::out_of_range("PlanarModel: body " + std::to_string(body) + " is not flexible");
  }
  const FlexibleBeam& beam = *beams_[static_cast<std::size_t>(body)];
  const int m = beam.num_modes();
  const auto eta = q.segment(point.column + 3, m);
  const BeamPointMotion motion = v.size() > 0 ? beam.Motion(at, eta, v.segment(point.column + 3, m))
                                              : beam.Motion(at, eta, Eigen::VectorXd());
  const Eigen::Matrix2d A = Eigen::Rotation2Dd(frame.theta).toRotationMatrix();
  point.s_w = A * motion.u;
  point.p = frame.r + point.s_w;
  point.jac_eta = A * motion.B;
  point.slope = at.slope;
  point.angle += at.slope.dot(eta);
  if (v.size() > 0) {
    const Eigen::Vector2d u_dot_w = A * motion.u_dot;
    point.p_dot = frame.r_dot + frame.omega * Perp(point.s_w) + u_dot_w;
    // A (2 ω J B η̇ − ḣ e_x): the Coriolis and foreshortening-rate terms of p̈.
    point.a_elastic = 2.0 * frame.omega * Perp(u_dot_w) - motion.hdot * A.col(0);
    point.angle_rate += at.slope.dot(v.segment(point.column + 3, m));
  }
  return point;
}

void PlanarModel::AddPointRow(const PlanarPointState& point, const Eigen::Vector2d& c,
                              Eigen::Ref<Eigen::MatrixXd> G, Eigen::Index row) {
  if (point.column < 0) return;
  // Written, not added: a row's two points are on different bodies.
  G.block<1, 2>(row, point.column) = c.transpose();
  G(row, point.column + 2) = c.dot(Perp(point.s_w));
  if (point.elastic()) {
    G.block(row, point.column + 3, 1, point.jac_eta.cols()) = c.transpose() * point.jac_eta;
  }
}

void PlanarModel::AddAngleRow(const PlanarPointState& point, double sign,
                              Eigen::Ref<Eigen::MatrixXd> G, Eigen::Index row) {
  if (point.column < 0) return;
  G(row, point.column + 2) = sign;
  if (point.elastic()) G.block(row, point.column + 3, 1, point.slope.size()) = sign * point.slope;
}

int PlanarModel::FindBody(const std::string& name) const {
  if (name == "ground") return kGround;
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].name == name) return static_cast<int>(i);
  }
  return -2;
}

int PlanarModel::FindJoint(const std::string& name) const {
  for (std::size_t j = 0; j < joints_.size(); ++j) {
    if (joints_[j].name == name) return static_cast<int>(j);
  }
  return -1;
}

int PlanarModel::NumRows(PlanarJointType type) {
  switch (type) {
    case PlanarJointType::kRevolute:
    case PlanarJointType::kPrismatic:
      return 2;
    case PlanarJointType::kFixed:
      return 3;
    case PlanarJointType::kAngleDriver:
    case PlanarJointType::kDistance:
    case PlanarJointType::kPointOnLine:
      return 1;
  }
  return 0;
}

PlanarRowRange PlanarModel::JointRows(int joint) const {
  const auto j = static_cast<std::size_t>(joint);
  if (joint < 0 || j >= joints_.size()) {
    throw std::out_of_range("PlanarModel::JointRows: joint index " + std::to_string(joint) +
                            " outside [0, " + std::to_string(joints_.size()) + ")");
  }
  return {joint_first_row_[j], NumRows(joints_[j].type)};
}

int PlanarModel::DriverRow(int driver) const {
  if (driver < 0 || static_cast<std::size_t>(driver) >= drivers_.size()) {
    throw std::out_of_range("PlanarModel::DriverRow: driver index " + std::to_string(driver) +
                            " outside [0, " + std::to_string(drivers_.size()) + ")");
  }
  return num_own_joint_rows_ + driver;
}

int PlanarModel::num_joint_rows() const {
  return num_own_joint_rows_ + static_cast<int>(drivers_.size());
}

Eigen::VectorXd PlanarModel::InitialPositions() const {
  Eigen::VectorXd q = Eigen::VectorXd::Zero(num_coordinates_);
  for (int i = 0; i < num_bodies(); ++i) q.segment<3>(Offset(i)) = bodies_[i].q0;
  return q;
}

Eigen::VectorXd PlanarModel::InitialVelocities() const {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(num_coordinates_);
  for (int i = 0; i < num_bodies(); ++i) v.segment<3>(Offset(i)) = bodies_[i].v0;
  return v;
}

// ---- PlanarModelBuilder -------------------------------------------------------------------

int PlanarModelBuilder::AddBody(const PlanarBody& body) {
  RequireName("body", body.name, model_.bodies_.size());
  const std::string label = Label("body", body.name);
  if (body.name == "ground") Fail(label, "the name 'ground' is reserved for the fixed frame");
  RequireUniqueName(label, body.name, model_.bodies_);
  RequireFiniteVec(label, "q0", body.q0);
  RequireFiniteVec(label, "v0", body.v0);
  PlanarBody stored = body;
  std::shared_ptr<const FlexibleBeam> beam;
  std::vector<BeamPoint> nodes;
  if (body.beam) {
    beam = std::make_shared<const FlexibleBeam>(*body.beam, label);
    stored.mass = beam->mass();
    stored.inertia = beam->centroidal_inertia();
    for (int k = 0; k < beam->num_nodes(); ++k) nodes.push_back(beam->PointAt(beam->NodeX(k)));
    model_.has_flexible_ = true;
  } else {
    RequirePositive(label, "mass", body.mass);
    RequirePositive(label, "inertia", body.inertia);
  }
  model_.offset_.push_back(model_.num_coordinates_);
  model_.num_coordinates_ += 3 + (beam ? beam->num_modes() : 0);
  model_.beams_.push_back(std::move(beam));
  model_.beam_nodes_.push_back(std::move(nodes));
  model_.bodies_.push_back(std::move(stored));
  return model_.num_bodies() - 1;
}

void PlanarModelBuilder::RequireNode(const std::string& label, const char* field, int body,
                                     int node, const Eigen::Vector2d& point) const {
  if (node < 0) return;
  const FlexibleBeam* beam =
      body >= 0 ? model_.beams_[static_cast<std::size_t>(body)].get() : nullptr;
  if (beam == nullptr) {
    Fail(label, std::string(field) + " " + std::to_string(node) +
                    " given but the body is not a flexible body");
  }
  if (node >= beam->num_nodes()) {
    Fail(label, std::string(field) + " " + std::to_string(node) + " does not exist (body '" +
                    model_.bodies_[static_cast<std::size_t>(body)].name + "' has nodes 0.." +
                    std::to_string(beam->num_nodes() - 1) + ")");
  }
  if (point != Eigen::Vector2d::Zero()) {
    Fail(label,
         std::string(field) + " and a non-zero point are exclusive, got point " + Vec(point));
  }
}

int PlanarModelBuilder::AddJoint(const PlanarJoint& joint) {
  const std::string label = RequireTwoBodyItem("joint", joint, model_.joints_, model_.num_bodies());
  RequireFiniteVec(label, "point_a", joint.point_a);
  RequireFiniteVec(label, "point_b", joint.point_b);
  RequireFiniteVec(label, "axis_a", joint.axis_a);
  RequireFinite(label, "angle0", joint.angle0);
  RequireFinite(label, "rate", joint.rate);
  RequireFinite(label, "length", joint.length);
  RequireNode(label, "node_a", joint.body_a, joint.node_a, joint.point_a);
  RequireNode(label, "node_b", joint.body_b, joint.node_b, joint.point_b);
  PlanarJoint stored = joint;
  if (joint.type == PlanarJointType::kPrismatic || joint.type == PlanarJointType::kPointOnLine) {
    const double length = joint.axis_a.norm();
    if (!(length > 0.0)) Fail(label, "axis_a must be non-zero, got " + Vec(joint.axis_a));
    stored.axis_a /= length;  // so that the normal row measures a distance
  }
  if (joint.type == PlanarJointType::kDistance) {
    if (joint.length < 0.0)
      Fail(label, "length must be > 0 (or 0: from q0), got " + Num(joint.length));
    if (joint.length == 0.0) {
      // L from the bodies' initial configuration.
      // A node's initial point is its undeformed place (η = 0 initially).
      const auto initial_point = [&](int body, int node, Eigen::Vector2d s) -> Eigen::Vector2d {
        if (body == kGround) return s;
        const Eigen::Vector3d& q0 = model_.bodies_[static_cast<std::size_t>(body)].q0;
        if (node >= 0) s = {model_.beams_[static_cast<std::size_t>(body)]->NodeX(node), 0.0};
        return q0.head<2>() + Rotate(q0.z(), s);
      };
      const Eigen::Vector2d pa = initial_point(joint.body_a, joint.node_a, joint.point_a);
      const Eigen::Vector2d pb = initial_point(joint.body_b, joint.node_b, joint.point_b);
      stored.length = (pb - pa).norm();
      // Points within round-off of each other (1e-12 of their size) coincide.
      if (!(stored.length > 1e-12 * std::max({1.0, pa.norm(), pb.norm()}))) {
        Fail(label,
             "length is 0 and the two points coincide in the initial configuration: give "
             "length > 0");
      }
    }
  }
  model_.joint_first_row_.push_back(model_.num_own_joint_rows_);
  model_.num_own_joint_rows_ += PlanarModel::NumRows(joint.type);
  model_.joints_.push_back(std::move(stored));
  return static_cast<int>(model_.joints_.size()) - 1;
}

int PlanarModelBuilder::AddDriver(const PlanarDriver& driver) {
  RequireName("driver", driver.name, model_.drivers_.size());
  const std::string label = Label("driver", driver.name);
  RequireUniqueName(label, driver.name, model_.drivers_);
  const auto num_joints = static_cast<int>(model_.joints_.size());
  if (driver.joint < 0 || driver.joint >= num_joints) {
    Fail(label, "joint index " + std::to_string(driver.joint) + " outside [0, " +
                    std::to_string(num_joints) + ")");
  }
  const PlanarJoint& joint = model_.joints_[static_cast<std::size_t>(driver.joint)];
  if (driver.kind == DriverKind::kAngle && joint.type != PlanarJointType::kRevolute) {
    Fail(label, "an angle driver needs a revolute joint; '" + joint.name + "' is not one");
  }
  if (driver.kind == DriverKind::kDisplacement && joint.type != PlanarJointType::kPrismatic) {
    Fail(label, "a displacement driver needs a prismatic joint; '" + joint.name + "' is not one");
  }
  ValidateProfile(label, driver.profile);
  model_.drivers_.push_back(driver);
  return static_cast<int>(model_.drivers_.size()) - 1;
}

int PlanarModelBuilder::AddSpringDamper(const PlanarSpringDamper& spring) {
  const std::string label = RequireSpringDamper(spring, model_.springs_, model_.num_bodies());
  RequireNode(label, "node_a", spring.body_a, spring.node_a, spring.point_a);
  RequireNode(label, "node_b", spring.body_b, spring.node_b, spring.point_b);
  model_.springs_.push_back(spring);
  return static_cast<int>(model_.springs_.size()) - 1;
}

int PlanarModelBuilder::AddLoad(const PlanarLoad& load) {
  RequireName("load", load.name, model_.loads_.size());
  const std::string label = Label("load", load.name);
  RequireUniqueName(label, load.name, model_.loads_);
  RequireBody(label, "body", load.body, model_.num_bodies(), false);
  RequireFiniteVec(label, "force", load.force);
  RequireFiniteVec(label, "point", load.point);
  RequireFinite(label, "torque", load.torque);
  RequireNode(label, "node", load.body, load.node, load.point);
  if (load.scale) ValidateProfile(label, *load.scale);
  model_.loads_.push_back(load);
  return static_cast<int>(model_.loads_.size()) - 1;
}

int PlanarModelBuilder::AddTorsionalSpring(const PlanarTorsionalSpring& spring) {
  RequireName("torsional spring", spring.name, model_.torsional_.size());
  const std::string label = Label("torsional spring", spring.name);
  RequireUniqueName(label, spring.name, model_.torsional_);
  const auto num_joints = static_cast<int>(model_.joints_.size());
  if (spring.joint < 0 || spring.joint >= num_joints) {
    Fail(label, "joint index " + std::to_string(spring.joint) + " outside [0, " +
                    std::to_string(num_joints) + ")");
  }
  const PlanarJoint& joint = model_.joints_[static_cast<std::size_t>(spring.joint)];
  if (joint.type != PlanarJointType::kRevolute) {
    Fail(label, "a torsional spring needs a revolute joint; '" + joint.name + "' is not one");
  }
  RequireNonNegative(label, "stiffness", spring.stiffness);
  RequireNonNegative(label, "damping", spring.damping);
  RequireFinite(label, "angle0", spring.angle0);
  model_.torsional_.push_back(spring);
  return static_cast<int>(model_.torsional_.size()) - 1;
}

void PlanarModelBuilder::SetGravity(const Eigen::Vector2d& g) {
  if (!g.allFinite()) throw std::invalid_argument("gravity must be finite, got " + Vec(g));
  model_.gravity_ = g;
}

std::shared_ptr<const PlanarModel> PlanarModelBuilder::Build() {
  if (model_.num_bodies() == 0) throw std::invalid_argument("planar model: no bodies were added");
  return std::make_shared<const PlanarModel>(model_);
}

// ---- PlanarMultibodySystem ----------------------------------------------------------------

PlanarMultibodySystem::PlanarMultibodySystem(std::shared_ptr<const PlanarModel> model)
    : model_(std::move(model)) {
  if (!model_) throw std::invalid_argument("PlanarMultibodySystem: null model");
  AddConstraintBlock(std::make_shared<const PlanarJointBlock>(model_));
  rigid_gravity_.setZero(model_->num_coordinates());
  for (int i = 0; i < model_->num_bodies(); ++i) {
    if (model_->beam(i) != nullptr) continue;  // a beam's gravity comes with its other forces
    rigid_gravity_.segment<2>(model_->Offset(i)) =
        model_->bodies()[static_cast<std::size_t>(i)].mass * model_->gravity();
  }
}

void PlanarMultibodySystem::MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const {
  const int n = nv();
  M->setZero(n, n);
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const PlanarBody& body = model_->bodies()[static_cast<std::size_t>(i)];
    const int k = model_->Offset(i);
    if (const FlexibleBeam* beam = model_->beam(i)) {
      CheckSize(q, nq(), "q", "PlanarMultibodySystem::MassMatrix");
      const int nb = 3 + beam->num_modes();
      beam->MassMatrix(q(k + 2), q.segment(k + 3, nb - 3), M->block(k, k, nb, nb));
      continue;
    }
    (*M)(k, k) = body.mass;
    (*M)(k + 1, k + 1) = body.mass;
    (*M)(k + 2, k + 2) = body.inertia;
  }
}

void PlanarMultibodySystem::Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                   Eigen::VectorXd* F) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::Forces");
  CheckSize(v, nv(), "v", "PlanarMultibodySystem::Forces");
  *F = rigid_gravity_;
  const Eigen::Vector2d& gravity = model_->gravity();
  const Eigen::VectorXd no_v;
  for (int i = 0; model_->has_flexible_bodies() && i < model_->num_bodies(); ++i) {
    if (const FlexibleBeam* beam = model_->beam(i)) {
      // Inertial (quadratic velocity), gravity, elastic and damping forces of the beam.
      const int k = model_->Offset(i);
      const int m = beam->num_modes();
      beam->AddForces(q(k + 2), q.segment(k + 3, m), v(k + 2), v.segment(k + 3, m), gravity,
                      F->segment(k, 3 + m));
    }
  }
  for (const PlanarLoad& load : model_->loads()) {
    const PlanarPointState point = model_->Point(load.body, load.node, load.point, q, no_v);
    const double scale = LoadScale(load, t);
    AddPointForce(point, scale * load.force, F);
    AddPointTorque(point, scale * load.torque, F);
  }
  for (const PlanarTorsionalSpring& spring : model_->torsional_springs()) {
    const TorsionalState s = TorsionalOf(*model_, spring, q, v);
    // Torque on b: −k (θ_b − θ_a − θ₀) − c (θ̇_b − θ̇_a); the opposite on a.
    const double torque = -spring.stiffness * s.angle - spring.damping * s.rate;
    if (s.at_node) {
      AddPointTorque(s.b, torque, F);
      AddPointTorque(s.a, -torque, F);
      continue;
    }
    if (s.body_b != kGround) (*F)(model_->Offset(s.body_b) + 2) += torque;
    if (s.body_a != kGround) (*F)(model_->Offset(s.body_a) + 2) -= torque;
  }
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const PlanarPointState pa = model_->Point(spring.body_a, spring.node_a, spring.point_a, q, v);
    const PlanarPointState pb = model_->Point(spring.body_b, spring.node_b, spring.point_b, q, v);
    const Eigen::Vector2d d = pb.p - pa.p;
    const double length = d.norm();
    // Force on b: −(k (ℓ − L₀) + c ℓ̇) e, e = d / ℓ. With L₀ = 0 the elastic part is −k d, defined
    // even at ℓ = 0; otherwise the direction (and the damping along it) is undefined at ℓ = 0
    // and that part is taken as zero.
    Eigen::Vector2d f_b = Eigen::Vector2d::Zero();
    if (spring.rest_length == 0.0) {
      f_b = -spring.stiffness * d;
    }
    if (length > 0.0) {
      const Eigen::Vector2d e = d / length;
      const double length_dot = e.dot(pb.p_dot - pa.p_dot);
      double tension = spring.damping * length_dot;
      if (spring.rest_length != 0.0) tension += spring.stiffness * (length - spring.rest_length);
      f_b -= tension * e;
    }
    AddPointForce(pb, f_b, F);
    AddPointForce(pa, -f_b, F);
  }
}

void PlanarMultibodySystem::ForceJacobians(double t, const Eigen::VectorXd& q,
                                           const Eigen::VectorXd& v, Eigen::MatrixXd* K,
                                           Eigen::MatrixXd* C) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::ForceJacobians");
  CheckSize(v, nv(), "v", "PlanarMultibodySystem::ForceJacobians");
  if (model_->has_flexible_bodies()) {
    MechanicalSystem::ForceJacobians(t, q, v, K, C);
    return;
  }
  const int n = nv();
  if (K != nullptr) K->setZero(n, n);
  if (C != nullptr) C->setZero(n, n);
  // A world force f at s_w: F_θ = perp(s_w)·f, ∂F_θ/∂θ = perp(perp(s_w))·f = −s_w·f.
  const auto add_rotation_term = [&](int body, const Eigen::Vector2d& s_w,
                                     const Eigen::Vector2d& f) {
    if (K == nullptr || body == kGround) return;
    const int i = model_->Offset(body) + 2;
    (*K)(i, i) += s_w.dot(f);
  };
  for (const PlanarLoad& load : model_->loads()) {
    add_rotation_term(load.body, Rotate(StateOf(*model_, load.body, q).theta, load.point),
                      LoadScale(load, t) * load.force);
  }
  // Torsional springs: F_θb = −k (θ_b − θ_a − θ₀) − c (θ̇_b − θ̇_a) = −F_θa, so K and C are
  // k and c times [1 −1; −1 1] on (θ_a, θ_b) (the ground's entries dropped).
  for (const PlanarTorsionalSpring& spring : model_->torsional_springs()) {
    const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(spring.joint)];
    const int ia = joint.body_a == kGround ? -1 : model_->Offset(joint.body_a) + 2;
    const int ib = joint.body_b == kGround ? -1 : model_->Offset(joint.body_b) + 2;
    for (auto [matrix, coefficient] : {std::pair{K, spring.stiffness}, {C, spring.damping}}) {
      if (matrix == nullptr) continue;
      for (const auto& [r, c, sign] :
           {std::tuple{ia, ia, 1.0}, {ib, ib, 1.0}, {ia, ib, -1.0}, {ib, ia, -1.0}}) {
        if (r >= 0 && c >= 0) (*matrix)(r, c) += sign * coefficient;
      }
    }
  }
  Eigen::MatrixXd D(2, n), E(2, n);  // D = ∂d/∂q, E = ∂ḋ/∂q at fixed v
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const BodyState body_a = StateOf(*model_, spring.body_a, q, v);
    const BodyState body_b = StateOf(*model_, spring.body_b, q, v);
    const PointState pa = PointOf(body_a, spring.point_a);
    const PointState pb = PointOf(body_b, spring.point_b);
    const Eigen::Vector2d d = pb.p - pa.p;
    const Eigen::Vector2d d_dot = pb.p_dot - pa.p_dot;
    const double length = d.norm();
    D.setZero();
    E.setZero();
    // ṗ = ṙ + ω perp(s_w): ∂p/∂(x, y, θ) = [I, perp(s_w)], ∂ṗ/∂θ = −ω s_w.
    if (spring.body_b != kGround) {
      const int k = model_->Offset(spring.body_b);
      D.middleCols<2>(k).setIdentity();
      D.col(k + 2) = Perp(pb.s_w);
      E.col(k + 2) = -body_b.omega * pb.s_w;
    }
    if (spring.body_a != kGround) {
      const int k = model_->Offset(spring.body_a);
      D.middleCols<2>(k) = -Eigen::Matrix2d::Identity();
      D.col(k + 2) = -Perp(pa.s_w);
      E.col(k + 2) = body_a.omega * pa.s_w;
    }
    // f = −k d (L₀ = 0) − T e with T = c ℓ̇ + k' (ℓ − L₀), k' = k if L₀ ≠ 0 (as in Forces).
    Eigen::Vector2d f = Eigen::Vector2d::Zero();
    Eigen::Matrix2d df_dd = Eigen::Matrix2d::Zero();
    Eigen::Matrix2d df_dddot = Eigen::Matrix2d::Zero();
    if (spring.rest_length == 0.0) {
      f = -spring.stiffness * d;
      df_dd = -spring.stiffness * Eigen::Matrix2d::Identity();
    }
    if (length > 0.0) {
      const Eigen::Vector2d e = d / length;
      const Eigen::Matrix2d de_dd = (Eigen::Matrix2d::Identity() - e * e.transpose()) / length;
      const double k_line = spring.rest_length != 0.0 ? spring.stiffness : 0.0;
      const double length_dot = e.dot(d_dot);
      const double tension = spring.damping * length_dot + k_line * (length - spring.rest_length);
      f -= tension * e;
      // ∂T/∂d = c ḋᵀ ∂e/∂d + k' eᵀ, ∂T/∂ḋ = c eᵀ.
      const Eigen::RowVector2d dT_dd =
          spring.damping * d_dot.transpose() * de_dd + k_line * e.transpose();
      df_dd -= e * dT_dd + tension * de_dd;
      df_dddot = -spring.damping * e * e.transpose();
    }
    if (K != nullptr) {
      K->noalias() -= D.transpose() * (df_dd * D + df_dddot * E);
      add_rotation_term(spring.body_b, pb.s_w, f);
      add_rotation_term(spring.body_a, pa.s_w, -f);
    }
    if (C != nullptr) C->noalias() -= D.transpose() * df_dddot * D;
  }
}

double PlanarMultibodySystem::PotentialEnergy(double /*t*/, const Eigen::VectorXd& q) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::PotentialEnergy");
  double V = 0.0;
  // Gravity: −m g·r; a flexible body: its elastic energy and −g·(m r + A s(η)).
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const int k = model_->Offset(i);
    if (const FlexibleBeam* beam = model_->beam(i)) {
      V += beam->PotentialEnergy(q.segment<2>(k), q(k + 2), q.segment(k + 3, beam->num_modes()),
                                 model_->gravity());
      continue;
    }
    V -=
        model_->bodies()[static_cast<std::size_t>(i)].mass * model_->gravity().dot(q.segment<2>(k));
  }
  // Constant loads: −f·p − τ θ (a constant world force at a body point is conservative; at a
  // node p and θ are the node's). Loads with a time profile are not counted (as in the spatial
  // model): their work is an input.
  const Eigen::VectorXd no_v;
  for (const PlanarLoad& load : model_->loads()) {
    if (load.scale) continue;
    const PlanarPointState point = model_->Point(load.body, load.node, load.point, q, no_v);
    V -= load.force.dot(point.p) + load.torque * point.angle;
  }
  // Springs: ½ k (ℓ − L₀)².
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const Eigen::Vector2d d =
        model_->Point(spring.body_b, spring.node_b, spring.point_b, q, no_v).p -
        model_->Point(spring.body_a, spring.node_a, spring.point_a, q, no_v).p;
    const double stretch = d.norm() - spring.rest_length;
    V += 0.5 * spring.stiffness * stretch * stretch;
  }
  // Torsional springs: ½ k (θ_b − θ_a − θ₀)².
  for (const PlanarTorsionalSpring& spring : model_->torsional_springs()) {
    const double angle = TorsionalOf(*model_, spring, q, Eigen::VectorXd()).angle;
    V += 0.5 * spring.stiffness * angle * angle;
  }
  return V;
}

namespace {
// "<body><suffix>" of coordinate i: the three frame coordinates, then "<prefix>eta<k>".
std::string CoordinateName(const PlanarModel& model, int i, const char* const (&frame)[3],
                           const char* elastic, const char* what) {
  if (i < 0 || i >= model.num_coordinates()) {
    throw std::out_of_range(std::string("PlanarMultibodySystem: ") + what + " index " +
                            std::to_string(i) + " outside [0, " +
                            std::to_string(model.num_coordinates()) + ")");
  }
  int body = model.num_bodies() - 1;
  while (model.Offset(body) > i) --body;
  const int local = i - model.Offset(body);
  const std::string& name = model.bodies()[static_cast<std::size_t>(body)].name;
  if (local < 3) return name + frame[local];
  return name + elastic + std::to_string(local - 2);
}
}  // namespace

std::string PlanarMultibodySystem::PositionName(int i) const {
  static constexpr const char* kSuffix[3] = {".x", ".y", ".theta"};
  return CoordinateName(*model_, i, kSuffix, ".eta", "position");
}

std::string PlanarMultibodySystem::VelocityName(int i) const {
  static constexpr const char* kSuffix[3] = {".vx", ".vy", ".vtheta"};
  return CoordinateName(*model_, i, kSuffix, ".veta", "velocity");
}

std::vector<PlanarJointReaction> PlanarMultibodySystem::JointReactions(
    double t, const Eigen::VectorXd& q, std::span<const int> rows,
    const Eigen::VectorXd& lambda) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::JointReactions");
  if (lambda.size() != static_cast<Eigen::Index>(rows.size())) {
    throw std::invalid_argument("PlanarMultibodySystem::JointReactions: lambda has size " +
                                std::to_string(lambda.size()) + ", expected " +
                                std::to_string(rows.size()));
  }
  const std::size_t num_joints = model_->joints().size();
  std::vector<PlanarJointReaction> out(num_joints);
  // Owner joint of every joint-block row (its own rows, then its drivers' rows).
  const int num_block_rows = model_->num_joint_rows();
  std::vector<int> owner(static_cast<std::size_t>(num_block_rows), -1);
  for (std::size_t j = 0; j < num_joints; ++j) {
    const PlanarRowRange range = model_->JointRows(static_cast<int>(j));
    for (int r = range.first; r < range.first + range.count; ++r) {
      owner[static_cast<std::size_t>(r)] = static_cast<int>(j);
    }
  }
  for (std::size_t d = 0; d < model_->drivers().size(); ++d) {
    owner[static_cast<std::size_t>(model_->DriverRow(static_cast<int>(d)))] =
        model_->drivers()[d].joint;
  }
  std::vector<int> joint_rows;
  std::vector<Eigen::Index> positions;  // of each joint row in `rows` / `lambda`
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] >= 0 && rows[k] < num_block_rows) {
      joint_rows.push_back(rows[k]);
      positions.push_back(static_cast<Eigen::Index>(k));
    }
  }
  if (joint_rows.empty()) return out;
  Eigen::MatrixXd G;
  ConstraintJacobian(t, q, joint_rows, &G);
  // Q_j = Gᵀ λ restricted to the rows of joint j, accumulated row by row.
  std::vector<Eigen::VectorXd> Q(num_joints);
  for (std::size_t k = 0; k < joint_rows.size(); ++k) {
    const int j = owner[static_cast<std::size_t>(joint_rows[k])];
    if (j < 0) continue;
    Eigen::VectorXd& Qj = Q[static_cast<std::size_t>(j)];
    if (Qj.size() == 0) Qj = Eigen::VectorXd::Zero(nv());
    Qj += G.row(static_cast<Eigen::Index>(k)).transpose() * lambda(positions[k]);
  }
  for (std::size_t j = 0; j < num_joints; ++j) {
    if (Q[j].size() == 0) continue;
    const PlanarJoint& joint = model_->joints()[j];
    const auto reduce = [&](int body, int node, const Eigen::Vector2d& point,
                            Eigen::Vector2d* force, double* torque) {
      if (body == kGround) return;
      const int k = model_->Offset(body);
      const Eigen::Vector2d s_w = model_->Point(body, node, point, q, Eigen::VectorXd()).s_w;
      *force = Q[j].segment<2>(k);
      // τ_p = τ_c − s_w × f (τ_c about the frame origin for a flexible body).
      *torque = Q[j](k + 2) - (s_w.x() * force->y() - s_w.y() * force->x());
    };
    reduce(joint.body_a, joint.node_a, joint.point_a, &out[j].force_on_a, &out[j].torque_on_a);
    reduce(joint.body_b, joint.node_b, joint.point_b, &out[j].force_on_b, &out[j].torque_on_b);
  }
  return out;
}

}  // namespace saltus::engine
