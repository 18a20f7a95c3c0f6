// Planar rigid multibody model in absolute coordinates.
//
// Body i has q_i = (x, y, θ) (position of its centre of mass, angle) and v_i = (ẋ, ẏ, θ̇), so
// T = I and M = diag(m_i, m_i, J_i) is constant. A point s (body frame) of body i is at
// p = r_i + R(θ_i) s. The ground is body index kGround (fixed, not in q).
//
// Joints (bilateral rows, analytic G and γ):
//   revolute   (2 rows)  r_a + R_a s_a − r_b − R_b s_b = 0
//   prismatic  (2 rows)  θ_b − θ_a − θ₀ = 0,  n_a · (p_b − p_a) = 0, n_a = R_a R(π/2) u_a
//   angle driver (1 row) θ_b − θ_a − (θ₀ + ω t) = 0          (rheonomic: ∂g/∂t = −ω)
// with u_a normalized by the builder, so the normal row is a distance. G is the Jacobian of g
// along v = (ẋ, ẏ, θ̇) using d(R(θ) s)/dθ = R(π/2) R(θ) s, and γ the v̇-free part of g̈ (for a
// body point p̈ = r̈ + θ̈ R(π/2) s_w − θ̇² s_w, s_w = R(θ) s).
// Force elements: uniform gravity, linear spring-damper between two points (rest length L₀,
// tension k (ℓ − L₀) + c ℓ̇ along the line, ℓ̇ = e·(ṗ_b − ṗ_a), e = (p_b − p_a)/ℓ; at ℓ = 0 the
// direction is undefined and only the L₀ = 0 elastic part −k (p_b − p_a) remains), constant
// force at a body point (world frame, generalized torque (R(π/2) s_w)·f about the centre of
// mass) plus a constant torque. Potential energy: gravity −m g·r, springs ½ k (ℓ − L₀)², loads
// −f·p − τ θ (all conservative; damping is not).
//
// PlanarModel is immutable; build it with PlanarModelBuilder, which validates every item and
// throws std::invalid_argument naming it ("body 'crank': mass must be > 0, got -1"): names are
// required and unique within bodies, joints, springs and loads ("ground" is reserved); masses and
// inertias > 0; stiffness, damping and rest length ≥ 0; body indices in [kGround, num_bodies)
// (loads: [0, num_bodies)), the two bodies of a joint or spring distinct; prismatic axis
// non-zero; every number finite. Build() throws if there are no bodies.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "engine/mechanical_system.h"

namespace saltus::engine {

constexpr int kGround = -1;

struct PlanarBody {
  std::string name;
  double mass = 1.0;                             // kg, > 0
  double inertia = 1.0;                          // kg·m², about the centre of mass, > 0
  Eigen::Vector3d q0 = Eigen::Vector3d::Zero();  // initial (x, y, θ)
  Eigen::Vector3d v0 = Eigen::Vector3d::Zero();  // initial (ẋ, ẏ, θ̇)
};

enum class PlanarJointType { kRevolute, kPrismatic, kAngleDriver };

struct PlanarJoint {
  std::string name;
  PlanarJointType type = PlanarJointType::kRevolute;
  int body_a = kGround;
  int body_b = kGround;
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();  // body-a frame (revolute, prismatic)
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();  // body-b frame (revolute, prismatic)
  Eigen::Vector2d axis_a = Eigen::Vector2d::UnitX();  // prismatic: sliding axis, body-a frame
  double angle0 = 0.0;                                // prismatic, driver: θ₀ (rad)
  double rate = 0.0;                                  // driver: ω (rad/s)
};

struct PlanarSpringDamper {
  std::string name;
  int body_a = kGround;
  int body_b = kGround;
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();
  double stiffness = 0.0;    // N/m, ≥ 0
  double damping = 0.0;      // N·s/m, ≥ 0
  double rest_length = 0.0;  // m, ≥ 0
};

struct PlanarLoad {
  std::string name;
  int body = 0;
  Eigen::Vector2d force = Eigen::Vector2d::Zero();  // N, world frame
  Eigen::Vector2d point = Eigen::Vector2d::Zero();  // application point, body frame
  double torque = 0.0;                              // N·m
};

class PlanarModel {
 public:
  int num_bodies() const { return static_cast<int>(bodies_.size()); }
  const std::vector<PlanarBody>& bodies() const { return bodies_; }
  const std::vector<PlanarJoint>& joints() const { return joints_; }
  const std::vector<PlanarSpringDamper>& springs() const { return springs_; }
  const std::vector<PlanarLoad>& loads() const { return loads_; }
  const Eigen::Vector2d& gravity() const { return gravity_; }
  // Index of the body with this name, or -2 if none ("ground" gives kGround).
  int FindBody(const std::string& name) const;
  // Initial q and v assembled from the bodies (3 per body).
  Eigen::VectorXd InitialPositions() const;
  Eigen::VectorXd InitialVelocities() const;

 private:
  friend class PlanarModelBuilder;
  std::vector<PlanarBody> bodies_;
  std::vector<PlanarJoint> joints_;
  std::vector<PlanarSpringDamper> springs_;
  std::vector<PlanarLoad> loads_;
  Eigen::Vector2d gravity_ = Eigen::Vector2d::Zero();
};

class PlanarModelBuilder {
 public:
  // Each Add validates its item and throws std::invalid_argument naming it. Returns the index.
  int AddBody(const PlanarBody& body);
  int AddJoint(const PlanarJoint& joint);
  int AddSpringDamper(const PlanarSpringDamper& spring);
  int AddLoad(const PlanarLoad& load);
  void SetGravity(const Eigen::Vector2d& g);
  std::shared_ptr<const PlanarModel> Build();

 private:
  PlanarModel model_;
};

// The model as a MechanicalSystem. Its first constraint block holds the joint rows, in joint
// order (2, 2, 1 rows for revolute, prismatic, driver), named "<joint>.x", "<joint>.y"
// (revolute), "<joint>.angle", "<joint>.normal" (prismatic), "<joint>.angle" (driver). The block
// is always added, with zero rows when there are no joints, so joint rows are the global rows
// [0, number of joint rows). Contacts are added as further blocks by contact::. Evaluation with
// q or v of the wrong size throws std::invalid_argument; a name index out of range throws
// std::out_of_range.
class PlanarMultibodySystem : public MechanicalSystem {
 public:
  explicit PlanarMultibodySystem(std::shared_ptr<const PlanarModel> model);

  const PlanarModel& model() const { return *model_; }
  int nq() const override { return 3 * model_->num_bodies(); }
  int nv() const override { return 3 * model_->num_bodies(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  bool HasConstantMassMatrix() const override { return true; }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  double PotentialEnergy(double t, const Eigen::VectorXd& q) const override;
  // Analytic K = −∂F/∂q and C = −∂F/∂v of loads and spring-dampers (gravity and torques are
  // constant). For a spring with d = p_b − p_a, D = ∂d/∂q (2 × nv), force f on b and F = Dᵀ f:
  // K = −Dᵀ (∂f/∂d D + ∂f/∂ḋ ∂(D v)/∂q) − (∂Dᵀ/∂q) f, C = −Dᵀ ∂f/∂ḋ D.
  void ForceJacobians(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      Eigen::MatrixXd* K, Eigen::MatrixXd* C) const override;
  std::string PositionName(int i) const override;  // "<body>.x", "<body>.y", "<body>.theta"
  std::string VelocityName(int i) const override;  // "<body>.vx", "<body>.vy", "<body>.vtheta"

 private:
  std::shared_ptr<const PlanarModel> model_;
};

}  // namespace saltus::engine
