#include "engine/planar_model.h"

#include <cmath>
#include <stdexcept>
#include <string>
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

// Pose and velocity of one body, the ground being the fixed frame (r = 0, θ = 0).
struct BodyState {
  Eigen::Vector2d r = Eigen::Vector2d::Zero();
  Eigen::Vector2d r_dot = Eigen::Vector2d::Zero();
  double theta = 0.0;
  double omega = 0.0;
};
BodyState StateOf(int body, const Eigen::VectorXd& q) {
  BodyState s;
  if (body == kGround) return s;
  s.r = q.segment<2>(3 * body);
  s.theta = q(3 * body + 2);
  return s;
}
BodyState StateOf(int body, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
  BodyState s = StateOf(body, q);
  if (body == kGround) return s;
  s.r_dot = v.segment<2>(3 * body);
  s.omega = v(3 * body + 2);
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

// Adds the generalized force of a world force f applied at the body point with world offset
// s_w from the centre of mass: (f, perp(s_w)·f) on (x, y, θ).
void AddPointForce(int body, const Eigen::Vector2d& s_w, const Eigen::Vector2d& f,
                   Eigen::VectorXd* F) {
  if (body == kGround) return;
  F->segment<2>(3 * body) += f;
  (*F)(3 * body + 2) += Perp(s_w).dot(f);
}

// ---- Joint constraint block ---------------------------------------------------------------

enum class JointRow { kRevoluteX, kRevoluteY, kAngle, kPrismaticNormal };

// The rows of all joints of a model, in joint order; G, γ and ∂g/∂t are analytic (see the
// derivations next to each row type below).
class PlanarJointBlock : public ConstraintBlock {
 public:
  explicit PlanarJointBlock(std::shared_ptr<const PlanarModel> model) : model_(std::move(model)) {
    const auto& joints = model_->joints();
    for (std::size_t j = 0; j < joints.size(); ++j) {
      const std::string& name = joints[j].name;
      const int index = static_cast<int>(j);
      switch (joints[j].type) {
        case PlanarJointType::kRevolute:
          AddRow(index, JointRow::kRevoluteX, name + ".x");
          AddRow(index, JointRow::kRevoluteY, name + ".y");
          break;
        case PlanarJointType::kPrismatic:
          AddRow(index, JointRow::kAngle, name + ".angle");
          AddRow(index, JointRow::kPrismaticNormal, name + ".normal");
          break;
        case PlanarJointType::kAngleDriver:
          AddRow(index, JointRow::kAngle, name + ".angle");
          break;
      }
    }
  }

  int num_rows() const override { return static_cast<int>(rows_.size()); }
  const ConstraintRowInfo& row_info(int local_row) const override {
    return infos_.at(static_cast<std::size_t>(local_row));
  }

  void Values(double t, const Eigen::VectorXd& q, std::span<const int> rows,
              Eigen::Ref<Eigen::VectorXd> g) const override {
    CheckQ(q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      const BodyState a = StateOf(joint.body_a, q);
      const BodyState b = StateOf(joint.body_b, q);
      double value = 0.0;
      switch (row.type) {
        case JointRow::kRevoluteX:
        case JointRow::kRevoluteY: {
          // g = p_a − p_b.
          const Eigen::Vector2d gap = PointOf(a, joint.point_a).p - PointOf(b, joint.point_b).p;
          value = row.type == JointRow::kRevoluteX ? gap.x() : gap.y();
          break;
        }
        case JointRow::kAngle:
          // g = θ_b − θ_a − θ₀ (− ω t for a driver; rate is 0 for a prismatic joint).
          value = b.theta - a.theta - joint.angle0 - DriverRate(joint) * t;
          break;
        case JointRow::kPrismaticNormal: {
          // g = n · d, n = perp(R_a u_a), d = p_b − p_a.
          const Eigen::Vector2d d = PointOf(b, joint.point_b).p - PointOf(a, joint.point_a).p;
          value = Perp(Rotate(a.theta, joint.axis_a)).dot(d);
          break;
        }
      }
      g(static_cast<Eigen::Index>(k)) = value;
    }
  }

  void Jacobian(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                Eigen::Ref<Eigen::MatrixXd> G) const override {
    CheckQ(q);
    G.setZero();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const auto i = static_cast<Eigen::Index>(k);
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      const int ca = 3 * joint.body_a;  // column of body a's x (unused for the ground)
      const int cb = 3 * joint.body_b;
      const bool has_a = joint.body_a != kGround;
      const bool has_b = joint.body_b != kGround;
      const BodyState a = StateOf(joint.body_a, q);
      const BodyState b = StateOf(joint.body_b, q);
      switch (row.type) {
        case JointRow::kRevoluteX:
        case JointRow::kRevoluteY: {
          // ġ = ṙ_a + ω_a perp(s_wa) − ṙ_b − ω_b perp(s_wb).
          const int c = row.type == JointRow::kRevoluteX ? 0 : 1;
          if (has_a) {
            G(i, ca + c) = 1.0;
            G(i, ca + 2) = Perp(Rotate(a.theta, joint.point_a))(c);
          }
          if (has_b) {
            G(i, cb + c) = -1.0;
            G(i, cb + 2) = -Perp(Rotate(b.theta, joint.point_b))(c);
          }
          break;
        }
        case JointRow::kAngle:
          if (has_a) G(i, ca + 2) = -1.0;
          if (has_b) G(i, cb + 2) = 1.0;
          break;
        case JointRow::kPrismaticNormal: {
          // ġ = ṅ·d + n·ḋ with ṅ = −ω_a u_w (u_w = R_a u_a, n = perp(u_w)) and
          // ḋ = ṙ_b + ω_b perp(s_wb) − ṙ_a − ω_a perp(s_wa).
          const PointState pa = PointOf(a, joint.point_a);
          const PointState pb = PointOf(b, joint.point_b);
          const Eigen::Vector2d u_w = Rotate(a.theta, joint.axis_a);
          const Eigen::Vector2d n = Perp(u_w);
          const Eigen::Vector2d d = pb.p - pa.p;
          if (has_a) {
            G.block<1, 2>(i, ca) = -n.transpose();
            G(i, ca + 2) = -u_w.dot(d) - n.dot(Perp(pa.s_w));
          }
          if (has_b) {
            G.block<1, 2>(i, cb) = n.transpose();
            G(i, cb + 2) = n.dot(Perp(pb.s_w));
          }
          break;
        }
      }
    }
  }

  void Gamma(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
             std::span<const int> rows, Eigen::Ref<Eigen::VectorXd> gamma) const override {
    CheckQ(q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      const BodyState a = StateOf(joint.body_a, q, v);
      const BodyState b = StateOf(joint.body_b, q, v);
      double value = 0.0;
      switch (row.type) {
        case JointRow::kRevoluteX:
        case JointRow::kRevoluteY: {
          // p̈ = r̈ + ω̇ perp(s_w) − ω² s_w, so γ = −ω_a² s_wa + ω_b² s_wb.
          const Eigen::Vector2d s_wa = Rotate(a.theta, joint.point_a);
          const Eigen::Vector2d s_wb = Rotate(b.theta, joint.point_b);
          const Eigen::Vector2d term = -a.omega * a.omega * s_wa + b.omega * b.omega * s_wb;
          value = row.type == JointRow::kRevoluteX ? term.x() : term.y();
          break;
        }
        case JointRow::kAngle:
          value = 0.0;  // linear in θ and t
          break;
        case JointRow::kPrismaticNormal: {
          // g̈ = n̈·d + 2 ṅ·ḋ + n·d̈ with n̈ = −ω̇_a u_w − ω_a² n; the v̇-free part is
          // γ = −ω_a² n·d − 2 ω_a u_w·ḋ + n·(ω_a² s_wa − ω_b² s_wb).
          const PointState pa = PointOf(a, joint.point_a);
          const PointState pb = PointOf(b, joint.point_b);
          const Eigen::Vector2d u_w = Rotate(a.theta, joint.axis_a);
          const Eigen::Vector2d n = Perp(u_w);
          const Eigen::Vector2d d = pb.p - pa.p;
          const Eigen::Vector2d d_dot = pb.p_dot - pa.p_dot;
          const double wa2 = a.omega * a.omega;
          const double wb2 = b.omega * b.omega;
          value =
              -wa2 * n.dot(d) - 2.0 * a.omega * u_w.dot(d_dot) + n.dot(wa2 * pa.s_w - wb2 * pb.s_w);
          break;
        }
      }
      gamma(static_cast<Eigen::Index>(k)) = value;
    }
  }

  void TimeDerivative(double /*t*/, const Eigen::VectorXd& q, std::span<const int> rows,
                      Eigen::Ref<Eigen::VectorXd> g_t) const override {
    CheckQ(q);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Row& row = rows_[static_cast<std::size_t>(rows[k])];
      const PlanarJoint& joint = model_->joints()[static_cast<std::size_t>(row.joint)];
      g_t(static_cast<Eigen::Index>(k)) = row.type == JointRow::kAngle ? -DriverRate(joint) : 0.0;
    }
  }

 private:
  struct Row {
    int joint;
    JointRow type;
  };

  static double DriverRate(const PlanarJoint& joint) {
    return joint.type == PlanarJointType::kAngleDriver ? joint.rate : 0.0;
  }
  void AddRow(int joint, JointRow type, std::string name) {
    rows_.push_back({joint, type});
    ConstraintRowInfo info;
    info.kind = ConstraintKind::kBilateral;
    info.name = std::move(name);
    infos_.push_back(std::move(info));
  }
  void CheckQ(const Eigen::VectorXd& q) const {
    CheckSize(q, 3 * model_->num_bodies(), "q", "planar joint constraints");
  }

  std::shared_ptr<const PlanarModel> model_;
  std::vector<Row> rows_;
  std::vector<ConstraintRowInfo> infos_;
};

}  // namespace

// ---- PlanarModel --------------------------------------------------------------------------

int PlanarModel::FindBody(const std::string& name) const {
  if (name == "ground") return kGround;
  for (std::size_t i = 0; i < bodies_.size(); ++i) {
    if (bodies_[i].name == name) return static_cast<int>(i);
  }
  return -2;
}

Eigen::VectorXd PlanarModel::InitialPositions() const {
  Eigen::VectorXd q(3 * num_bodies());
  for (int i = 0; i < num_bodies(); ++i) q.segment<3>(3 * i) = bodies_[i].q0;
  return q;
}

Eigen::VectorXd PlanarModel::InitialVelocities() const {
  Eigen::VectorXd v(3 * num_bodies());
  for (int i = 0; i < num_bodies(); ++i) v.segment<3>(3 * i) = bodies_[i].v0;
  return v;
}

// ---- PlanarModelBuilder -------------------------------------------------------------------

int PlanarModelBuilder::AddBody(const PlanarBody& body) {
  RequireName("body", body.name, model_.bodies_.size());
  const std::string label = Label("body", body.name);
  if (body.name == "ground") Fail(label, "the name 'ground' is reserved for the fixed frame");
  RequireUniqueName(label, body.name, model_.bodies_);
  RequirePositive(label, "mass", body.mass);
  RequirePositive(label, "inertia", body.inertia);
  RequireFiniteVec(label, "q0", body.q0);
  RequireFiniteVec(label, "v0", body.v0);
  model_.bodies_.push_back(body);
  return model_.num_bodies() - 1;
}

int PlanarModelBuilder::AddJoint(const PlanarJoint& joint) {
  const std::string label = RequireTwoBodyItem("joint", joint, model_.joints_, model_.num_bodies());
  RequireFiniteVec(label, "point_a", joint.point_a);
  RequireFiniteVec(label, "point_b", joint.point_b);
  RequireFiniteVec(label, "axis_a", joint.axis_a);
  RequireFinite(label, "angle0", joint.angle0);
  RequireFinite(label, "rate", joint.rate);
  PlanarJoint stored = joint;
  if (joint.type == PlanarJointType::kPrismatic) {
    const double length = joint.axis_a.norm();
    if (!(length > 0.0)) Fail(label, "axis_a must be non-zero, got " + Vec(joint.axis_a));
    stored.axis_a /= length;  // so that the normal row measures a distance
  }
  model_.joints_.push_back(std::move(stored));
  return static_cast<int>(model_.joints_.size()) - 1;
}

int PlanarModelBuilder::AddSpringDamper(const PlanarSpringDamper& spring) {
  RequireSpringDamper(spring, model_.springs_, model_.num_bodies());
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
  model_.loads_.push_back(load);
  return static_cast<int>(model_.loads_.size()) - 1;
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
}

void PlanarMultibodySystem::MassMatrix(const Eigen::VectorXd& /*q*/, Eigen::MatrixXd* M) const {
  const int n = nv();
  M->setZero(n, n);
  for (int i = 0; i < model_->num_bodies(); ++i) {
    const PlanarBody& body = model_->bodies()[static_cast<std::size_t>(i)];
    (*M)(3 * i, 3 * i) = body.mass;
    (*M)(3 * i + 1, 3 * i + 1) = body.mass;
    (*M)(3 * i + 2, 3 * i + 2) = body.inertia;
  }
}

void PlanarMultibodySystem::Forces(double /*t*/, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                   Eigen::VectorXd* F) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::Forces");
  CheckSize(v, nv(), "v", "PlanarMultibodySystem::Forces");
  F->setZero(nv());
  const Eigen::Vector2d& gravity = model_->gravity();
  for (int i = 0; i < model_->num_bodies(); ++i) {
    F->segment<2>(3 * i) += model_->bodies()[static_cast<std::size_t>(i)].mass * gravity;
  }
  for (const PlanarLoad& load : model_->loads()) {
    const BodyState body = StateOf(load.body, q);
    AddPointForce(load.body, Rotate(body.theta, load.point), load.force, F);
    (*F)(3 * load.body + 2) += load.torque;
  }
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const PointState pa = PointOf(StateOf(spring.body_a, q, v), spring.point_a);
    const PointState pb = PointOf(StateOf(spring.body_b, q, v), spring.point_b);
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
    AddPointForce(spring.body_b, pb.s_w, f_b, F);
    AddPointForce(spring.body_a, pa.s_w, -f_b, F);
  }
}

void PlanarMultibodySystem::ForceJacobians(double /*t*/, const Eigen::VectorXd& q,
                                           const Eigen::VectorXd& v, Eigen::MatrixXd* K,
                                           Eigen::MatrixXd* C) const {
  CheckSize(q, nq(), "q", "PlanarMultibodySystem::ForceJacobians");
  CheckSize(v, nv(), "v", "PlanarMultibodySystem::ForceJacobians");
  const int n = nv();
  if (K != nullptr) K->setZero(n, n);
  if (C != nullptr) C->setZero(n, n);
  // A world force f at s_w: F_θ = perp(s_w)·f, ∂F_θ/∂θ = perp(perp(s_w))·f = −s_w·f.
  const auto add_rotation_term = [&](int body, const Eigen::Vector2d& s_w,
                                     const Eigen::Vector2d& f) {
    if (K != nullptr && body != kGround) (*K)(3 * body + 2, 3 * body + 2) += s_w.dot(f);
  };
  for (const PlanarLoad& load : model_->loads()) {
    add_rotation_term(load.body, Rotate(StateOf(load.body, q).theta, load.point), load.force);
  }
  Eigen::MatrixXd D(2, n), E(2, n);  // D = ∂d/∂q, E = ∂ḋ/∂q at fixed v
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const BodyState body_a = StateOf(spring.body_a, q, v);
    const BodyState body_b = StateOf(spring.body_b, q, v);
    const PointState pa = PointOf(body_a, spring.point_a);
    const PointState pb = PointOf(body_b, spring.point_b);
    const Eigen::Vector2d d = pb.p - pa.p;
    const Eigen::Vector2d d_dot = pb.p_dot - pa.p_dot;
    const double length = d.norm();
    D.setZero();
    E.setZero();
    // ṗ = ṙ + ω perp(s_w): ∂p/∂(x, y, θ) = [I, perp(s_w)], ∂ṗ/∂θ = −ω s_w.
    if (spring.body_b != kGround) {
      D.middleCols<2>(3 * spring.body_b).setIdentity();
      D.col(3 * spring.body_b + 2) = Perp(pb.s_w);
      E.col(3 * spring.body_b + 2) = -body_b.omega * pb.s_w;
    }
    if (spring.body_a != kGround) {
      D.middleCols<2>(3 * spring.body_a) = -Eigen::Matrix2d::Identity();
      D.col(3 * spring.body_a + 2) = -Perp(pa.s_w);
      E.col(3 * spring.body_a + 2) = body_a.omega * pa.s_w;
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
  // Gravity: −m g·r.
  for (int i = 0; i < model_->num_bodies(); ++i) {
    V -= model_->bodies()[static_cast<std::size_t>(i)].mass *
         model_->gravity().dot(q.segment<2>(3 * i));
  }
  // Constant loads: −f·p − τ θ (a constant world force at a body point is conservative).
  for (const PlanarLoad& load : model_->loads()) {
    const BodyState body = StateOf(load.body, q);
    V -= load.force.dot(PointOf(body, load.point).p) + load.torque * body.theta;
  }
  // Springs: ½ k (ℓ − L₀)².
  for (const PlanarSpringDamper& spring : model_->springs()) {
    const Eigen::Vector2d d = PointOf(StateOf(spring.body_b, q), spring.point_b).p -
                              PointOf(StateOf(spring.body_a, q), spring.point_a).p;
    const double stretch = d.norm() - spring.rest_length;
    V += 0.5 * spring.stiffness * stretch * stretch;
  }
  return V;
}

std::string PlanarMultibodySystem::PositionName(int i) const {
  static constexpr const char* kSuffix[3] = {".x", ".y", ".theta"};
  if (i < 0 || i >= nq()) {
    throw std::out_of_range("PlanarMultibodySystem: position index " + std::to_string(i) +
                            " outside [0, " + std::to_string(nq()) + ")");
  }
  return model_->bodies()[static_cast<std::size_t>(i / 3)].name + kSuffix[i % 3];
}

std::string PlanarMultibodySystem::VelocityName(int i) const {
  static constexpr const char* kSuffix[3] = {".vx", ".vy", ".vtheta"};
  if (i < 0 || i >= nv()) {
    throw std::out_of_range("PlanarMultibodySystem: velocity index " + std::to_string(i) +
                            " outside [0, " + std::to_string(nv()) + ")");
  }
  return model_->bodies()[static_cast<std::size_t>(i / 3)].name + kSuffix[i % 3];
}

}  // namespace saltus::engine
