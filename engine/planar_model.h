// Planar multibody model in absolute coordinates: rigid bodies and flexible beams.
//
// Rigid body i has q_i = (x, y, θ) (position of its centre of mass, angle) and v_i = (ẋ, ẏ, θ̇),
// so T = I and its block of M is diag(m_i, m_i, J_i), constant. A point s (body frame) of body i
// is at p = r_i + R(θ_i) s. The ground is body index kGround (fixed, not in q).
// A flexible body (PlanarBody::beam; engine/flexible_beam.h, docs/flexible-bodies.md) has the
// coordinates (x, y, θ) of its floating frame followed by m modal coordinates η; its block of M
// depends on q, and its forces add the velocity, elastic and damping terms of the beam. Joints,
// loads and contacts attach to a point of its frame or to a node (PlanarPointState: position,
// velocity, Jacobian and velocity terms of the deformed node); their rows then have the elastic
// coordinates in G. Bodies follow each other in q in their order (PlanarModel::Offset).
//
// Joints (bilateral rows, analytic G and γ), d = p_b − p_a, s_w = R(θ) s, n = perp(u):
//   revolute      (2 rows)  r_a + R_a s_a − r_b − R_b s_b = 0                     .x .y
//   prismatic     (2 rows)  θ_b − θ_a − θ₀ = 0,  n_a · d = 0, n_a = R_a R(π/2) u_a   .angle .normal
//   angle_driver  (1 row)   θ_b − θ_a − (θ₀ + ω t) = 0  (rheonomic: ∂g/∂t = −ω)    .angle
//   distance      (1 row)   (d·d − L²)/(2L) = 0  (massless rod of length L > 0)    .distance
//   fixed (weld)  (3 rows)  the revolute pair and θ_b − θ_a − θ₀ = 0              .x .y .angle
//   point_on_line (1 row)   n_a · d = 0  (pin of b in a slot of a along u_a; rotation free) .normal
// with u_a normalized by the builder, so the normal row is a distance. The distance row is the
// scaled square (d·d − L²)/(2L) rather than ‖d‖ − L: the same value and G to first order at
// ‖d‖ = L (it is ‖d‖ − L + (‖d‖ − L)²/(2L)), but polynomial in q, so g, G = dᵀ ∂d/∂q / L and
// γ = (ḋ·ḋ + d·d̈_free)/L are defined everywhere, including d = 0 (as the spatial distance row).
// L is given (> 0); L = 0 in PlanarJoint::length means "the distance between the two points in
// the bodies' initial configuration (q0)", which must then be > 0.
// G is the Jacobian of g along v = (ẋ, ẏ, θ̇) using d(R(θ) s)/dθ = R(π/2) R(θ) s, and γ the
// v̇-free part of g̈ (for a body point p̈ = r̈ + θ̈ R(π/2) s_w − θ̇² s_w, s_w = R(θ) s); for the
// prismatic/point_on_line normal row, ṅ_a = −θ̇_a u_w, and
//   γ_normal   = −θ̇_a² n·d − 2 θ̇_a u_w·ḋ + n·(θ̇_a² s_wa − θ̇_b² s_wb),
//   γ_distance = (ḋ·ḋ + d·(θ̇_a² s_wa − θ̇_b² s_wb))/L,   γ_revolute = −θ̇_a² s_wa + θ̇_b² s_wb.
// The planar counterparts of the spatial spherical, universal, cylindrical and point-on-plane
// joints are not meaningful (in the plane a spherical joint is the revolute, a cylindrical one
// the prismatic, and universal/point-on-plane constrain only out-of-plane motion), and the planar
// joint is the absence of a joint.
//
// Drivers (rheonomic rows, one per driver, named "<driver>", after all joint rows), φ(t) a
// TimeProfile (engine/time_profile.h) with exact φ̇, φ̈:
//   angle        (revolute)  g = θ_b − θ_a − φ(t);  G = (.., −1 on θ_a, +1 on θ_b);
//                ∂g/∂t = −φ̇;  γ = −φ̈
//   displacement (prismatic) g = u_w·d − s(t), u_w = R_a u_a, n = perp(u_w);
//                G: −u_w on r_a, n·d − u_w·perp(s_wa) on θ_a, u_w on r_b, u_w·perp(s_wb) on θ_b;
//                ∂g/∂t = −ṡ;  γ = −θ̇_a² u_w·d + 2 θ̇_a n·ḋ + u_w·(θ̇_a² s_wa − θ̇_b² s_wb) − s̈
// (u̇_w = θ̇_a n). Any other joint type cannot take a driver (an error naming the driver).
//
// Force elements: uniform gravity, linear spring-damper between two points (rest length L₀,
// tension k (ℓ − L₀) + c ℓ̇ along the line, ℓ̇ = e·(ṗ_b − ṗ_a), e = (p_b − p_a)/ℓ; at ℓ = 0 the
// direction is undefined and only the L₀ = 0 elastic part −k (p_b − p_a) remains), constant
// force at a body point (world frame, generalized torque (R(π/2) s_w)·f about the centre of
// mass) plus a constant torque, both optionally scaled by a TimeProfile φ(t) (PlanarLoad::scale),
// and torsional spring-dampers on a revolute joint (torque −k (θ_b − θ_a − θ₀) − c (θ̇_b − θ̇_a) on
// body_b, the opposite on body_a; θ are the absolute angles of q, so θ_b − θ_a is not wrapped).
// Potential energy: gravity −m g·r, springs ½ k (ℓ − L₀)², torsional springs
// ½ k (θ_b − θ_a − θ₀)², constant loads −f·p − τ θ (all conservative: F = −∂V/∂q for them;
// damping is not). Loads with a profile are not counted (as in the spatial model): V(t, q) =
// −φ(t)(f·p + τ θ) would still give F = −∂V/∂q, but T + V would then change by ∂V/∂t, so neither
// choice makes the energy a constant of the motion; leaving them out makes E(t) − E(0) the work
// the time-dependent loads did (and the damping dissipated).
// A user force callback is not part of the planar model: an embedding program adds one to any
// model through saltus::Simulation::SetForceCallback (saltus/saltus.h; docs/embedding.md,
// "Forces"; Python: Simulation.set_force), and a LagrangianSystem takes its forces from a
// callback. A second, planar-model callback (like SpatialModel's engine::ForceCallback) would
// duplicate that path.
//
// PlanarModel is immutable; build it with PlanarModelBuilder, which validates every item and
// throws std::invalid_argument naming it ("body 'crank': mass must be > 0, got -1"): names are
// required and unique within bodies, joints, drivers, springs and loads ("ground" is reserved);
// masses and inertias > 0; stiffness, damping and rest length ≥ 0; body indices in [kGround,
// num_bodies) (loads: [0, num_bodies)), the two bodies of a joint or spring distinct; prismatic and
// point_on_line axis non-zero; distance length ≥ 0 (0: from q0, then > 0); a driver's joint index
// valid and of a type that can take it; a torsional spring's joint index valid and the joint a
// revolute (names unique among torsional springs); a load's profile finite; every number finite;
// a flexible body's beam valid (engine::ValidateBeam: E, ρ, section > 0, MinimumModes ≤
// modes ≤ available, Craig–Bampton boundary nodes existing and distinct); a node index (joints,
// loads) a node of a flexible body, with a zero point.
// Build() throws if there are no bodies.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/flexible_beam.h"
#include "engine/mechanical_system.h"
#include "engine/time_profile.h"

namespace saltus::engine {

constexpr int kGround = -1;

// A rigid body, or with `beam` a flexible body (engine/flexible_beam.h): then (x, y, θ) is its
// floating frame (origin at the beam's end X = 0, x axis along the beam), its coordinates are
// followed by the beam's modal coordinates η (m), which start at 0, and mass and inertia are
// those of the beam (the builder sets them; the given ones are ignored).
struct PlanarBody {
  std::string name;
  double mass = 1.0;                                  // kg, > 0
  double inertia = 1.0;                               // kg·m², about the centre of mass, > 0
  Eigen::Vector3d q0 = Eigen::Vector3d::Zero();       // initial (x, y, θ)
  Eigen::Vector3d v0 = Eigen::Vector3d::Zero();       // initial (ẋ, ẏ, θ̇)
  std::optional<BeamProperties> beam = std::nullopt;  // set: a flexible body
};

enum class PlanarJointType { kRevolute, kPrismatic, kAngleDriver, kDistance, kFixed, kPointOnLine };

struct PlanarJoint {
  std::string name;
  PlanarJointType type = PlanarJointType::kRevolute;
  int body_a = kGround;
  int body_b = kGround;
  Eigen::Vector2d point_a = Eigen::Vector2d::Zero();  // body-a frame (all but angle_driver)
  Eigen::Vector2d point_b = Eigen::Vector2d::Zero();  // body-b frame (all but angle_driver)
  Eigen::Vector2d axis_a = Eigen::Vector2d::UnitX();  // prismatic, point_on_line: axis, a frame
  double angle0 = 0.0;                                // prismatic, fixed, angle_driver: θ₀ (rad)
  double rate = 0.0;                                  // angle_driver: ω (rad/s)
  double length = 0.0;  // distance: L (m) > 0, or 0 for the initial distance of the points
  // A node of a flexible body_a / body_b (−1: the point is point_a / point_b of the body frame).
  // The joint point is then that node of the deformed centreline (point_a / point_b must be
  // zero) and the angle rows use the node's section angle θ + ψ η; axes stay in the frame. A
  // torsional spring on the joint acts between the sections' angles (torque ψᵀ τ on η).
  int node_a = -1;
  int node_b = -1;
};

// A rheonomic driver on a joint: kAngle on a revolute, kDisplacement on a prismatic.
struct PlanarDriver {
  std::string name;
  int joint = 0;  // index into PlanarModel::joints()
  DriverKind kind = DriverKind::kAngle;
  TimeProfile profile;  // φ(t) (rad) or s(t) (m)
};

// Global rows [first, first + count) of an item in the joint block (the first constraint block).
struct PlanarRowRange {
  int first = 0;
  int count = 0;
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
  // A node of flexible body_a / body_b (−1: none; then point_a / point_b must be zero): the end
  // is the node of the deformed centreline, p = r + A(θ) ū(X_k, η), and the end's force f loads
  // the elastic coordinates through the node's Jacobian (PlanarPointState::jac_eta).
  int node_a = -1;
  int node_b = -1;
};

struct PlanarLoad {
  std::string name;
  int body = 0;
  Eigen::Vector2d force = Eigen::Vector2d::Zero();  // N, world frame
  Eigen::Vector2d point = Eigen::Vector2d::Zero();  // application point, body frame
  double torque = 0.0;                              // N·m
  std::optional<TimeProfile> scale;                 // force and torque × φ(t) when set
  int node = -1;  // a node of a flexible body (then point must be zero; torque on its section)
};

// Torsional spring-damper on a revolute joint: torque −k (θ_b − θ_a − θ₀) − c (θ̇_b − θ̇_a) on the
// joint's body_b, the opposite on body_a (either may be the ground, θ = 0).
struct PlanarTorsionalSpring {
  std::string name;
  int joint = 0;           // index of a revolute joint
  double stiffness = 0.0;  // N·m/rad, ≥ 0
  double damping = 0.0;    // N·m·s/rad, ≥ 0
  double angle0 = 0.0;     // θ₀ (rad)
};

// Where a point of a planar body is and how it moves (PlanarModel::Point): a point s of the body
// frame, s_w = R(θ) s, or a node of a flexible body, s_w = A(θ) ū(X_k, η) (engine/
// flexible_beam.h); p = r + s_w. With the body's velocities (ṙ, ω[, η̇]):
//   ṗ = ṙ + ω perp(s_w) + jac_eta η̇,
//   p̈ = r̈ + ω̇ perp(s_w) + jac_eta η̈ − ω² s_w + a_elastic,   a_elastic = A (2 ω J B η̇ − ḣ e_x),
// and the section angle is θ + ψ η (rate ω + ψ η̇; its second derivative has no velocity part).
// For frame points jac_eta has no columns, ψ is empty and a_elastic = 0; for the ground
// everything is zero and column = −1.
struct PlanarPointState {
  Eigen::Vector2d s_w = Eigen::Vector2d::Zero();
  Eigen::Vector2d p = Eigen::Vector2d::Zero();
  Eigen::Vector2d p_dot = Eigen::Vector2d::Zero();
  Eigen::Vector2d a_elastic = Eigen::Vector2d::Zero();
  Eigen::Matrix<double, 2, Eigen::Dynamic> jac_eta;  // ∂p/∂η (2 × m)
  Eigen::RowVectorXd slope;                          // ψ (1 × m)
  double angle = 0.0;                                // θ (+ ψ η)
  double angle_rate = 0.0;                           // ω (+ ψ η̇)
  int column = -1;                                   // the body's first column in q and v
  bool elastic() const { return jac_eta.cols() > 0; }
};

class PlanarModel {
 public:
  int num_bodies() const { return static_cast<int>(bodies_.size()); }
  // nq = nv: 3 per rigid body, 3 + m per flexible body, in body order.
  int num_coordinates() const { return num_coordinates_; }
  // First coordinate of a body in q and v (bodies in [0, num_bodies); throws std::out_of_range).
  int Offset(int body) const;
  // The beam of a flexible body, nullptr for a rigid one.
  const FlexibleBeam* beam(int body) const { return beams_[static_cast<std::size_t>(body)].get(); }
  bool has_flexible_bodies() const { return has_flexible_; }
  // The point s of `body`'s frame (node < 0) or node `node` of its beam, at q and v (v may be
  // empty: velocities 0). body may be kGround (s is then a world point).
  PlanarPointState Point(int body, int node, const Eigen::Vector2d& s, const Eigen::VectorXd& q,
                         const Eigen::VectorXd& v) const;
  // The same for the point `at` (FlexibleBeam::PointAt: any X of the centreline) of the beam of
  // flexible `body` (throws std::out_of_range for a body that is not flexible).
  PlanarPointState BeamPointState(int body, const BeamPoint& at, const Eigen::VectorXd& q,
                                  const Eigen::VectorXd& v) const;
  // Adds c·∂p/∂v of a point (c a 2-vector: a row along c) to row `row` of G, and for a node the
  // angle row's columns when `angle` (1 on θ, ψ on η), scaled by `sign`.
  static void AddPointRow(const PlanarPointState& point, const Eigen::Vector2d& c,
                          Eigen::Ref<Eigen::MatrixXd> G, Eigen::Index row);
  static void AddAngleRow(const PlanarPointState& point, double sign, Eigen::Ref<Eigen::MatrixXd> G,
                          Eigen::Index row);
  const std::vector<PlanarBody>& bodies() const { return bodies_; }
  const std::vector<PlanarJoint>& joints() const { return joints_; }
  const std::vector<PlanarDriver>& drivers() const { return drivers_; }
  const std::vector<PlanarSpringDamper>& springs() const { return springs_; }
  const std::vector<PlanarLoad>& loads() const { return loads_; }
  const std::vector<PlanarTorsionalSpring>& torsional_springs() const { return torsional_; }
  const Eigen::Vector2d& gravity() const { return gravity_; }
  // Index of the body with this name, or -2 if none ("ground" gives kGround).
  int FindBody(const std::string& name) const;
  int FindJoint(const std::string& name) const;  // -1 if none
  // Rows of the joint block (PlanarMultibodySystem's first constraint block, so local = global
  // rows): joint j's own rows (2 revolute, 2 prismatic, 1 angle_driver, 1 distance, 3 fixed,
  // 1 point_on_line, in joint order), then one row per driver in driver order. Indices out of
  // range throw std::out_of_range.
  static int NumRows(PlanarJointType type);
  PlanarRowRange JointRows(int joint) const;
  int DriverRow(int driver) const;
  int num_joint_rows() const;  // all joint and driver rows
  // Initial q and v assembled from the bodies (3 per rigid body; 3 + m per flexible body, η = 0).
  Eigen::VectorXd InitialPositions() const;
  Eigen::VectorXd InitialVelocities() const;

 private:
  friend class PlanarModelBuilder;
  std::vector<PlanarBody> bodies_;
  std::vector<int> offset_;                                 // first coordinate of each body
  std::vector<std::shared_ptr<const FlexibleBeam>> beams_;  // null for rigid bodies
  std::vector<std::vector<BeamPoint>> beam_nodes_;          // per body: its beam's nodes
  int num_coordinates_ = 0;
  bool has_flexible_ = false;
  std::vector<PlanarJoint> joints_;
  std::vector<PlanarDriver> drivers_;
  std::vector<int> joint_first_row_;  // first row of each joint
  int num_own_joint_rows_ = 0;        // rows of all joints (drivers' rows follow)
  std::vector<PlanarSpringDamper> springs_;
  std::vector<PlanarLoad> loads_;
  std::vector<PlanarTorsionalSpring> torsional_;
  Eigen::Vector2d gravity_ = Eigen::Vector2d::Zero();
};

class PlanarModelBuilder {
 public:
  // Each Add validates its item and throws std::invalid_argument naming it. Returns the index.
  int AddBody(const PlanarBody& body);
  int AddJoint(const PlanarJoint& joint);
  int AddDriver(const PlanarDriver& driver);  // after its joint
  int AddSpringDamper(const PlanarSpringDamper& spring);
  int AddLoad(const PlanarLoad& load);
  // The joint must be a revolute joint already added (an error naming the spring otherwise).
  int AddTorsionalSpring(const PlanarTorsionalSpring& spring);
  void SetGravity(const Eigen::Vector2d& g);
  std::shared_ptr<const PlanarModel> Build();

 private:
  // A node index (≥ 0) must name a node of a flexible body, with a zero point.
  void RequireNode(const std::string& label, const char* field, int body, int node,
                   const Eigen::Vector2d& point) const;
  PlanarModel model_;
};

// Force and torque a joint (with the drivers acting on it) exerts, from the multipliers λ of its
// rows (PlanarModel::JointRows, DriverRow), whatever the joint type: the generalized constraint
// force Q = Gᵀλ of those rows (M v̇ = F + Gᵀλ, engine/constrained_dynamics.h) has on each body the
// entries (f, τ_c) on (x, y, θ), i.e. the force f and the torque τ_c about the centre of mass;
// reduced to the joint point p = r + s_w (s_w = R(θ) point_a or point_b) it is f and
// τ_p = τ_c − s_w × f (s × f = s_x f_y − s_y f_x). World frame, torques about +z. For the ground
// side the entries are zero. (For an angle_driver joint, which has no points, p is the centre of
// mass; its force is zero.)
struct PlanarJointReaction {
  Eigen::Vector2d force_on_a = Eigen::Vector2d::Zero();
  double torque_on_a = 0.0;  // about the joint point on a
  Eigen::Vector2d force_on_b = Eigen::Vector2d::Zero();
  double torque_on_b = 0.0;  // about the joint point on b
};

// The model as a MechanicalSystem. Its first constraint block holds the joint rows, in joint
// order (names in the table above, "<joint>.<row>"; PlanarModel::JointRows), then one row per
// driver named "<driver>" (PlanarModel::DriverRow). The block is always added, with zero rows
// when there are none, so these are the global rows [0, PlanarModel::num_joint_rows()). Contacts
// are added as further blocks by contact::. Evaluation with q or v of the wrong size throws
// std::invalid_argument; a name index out of range throws std::out_of_range.
class PlanarMultibodySystem : public MechanicalSystem {
 public:
  explicit PlanarMultibodySystem(std::shared_ptr<const PlanarModel> model);

  const PlanarModel& model() const { return *model_; }
  int nq() const override { return model_->num_coordinates(); }
  int nv() const override { return model_->num_coordinates(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  // Constant unless the model has flexible bodies.
  bool HasConstantMassMatrix() const override { return !model_->has_flexible_bodies(); }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  double PotentialEnergy(double t, const Eigen::VectorXd& q) const override;
  // Analytic K = −∂F/∂q and C = −∂F/∂v of loads, spring-dampers and torsional springs (gravity
  // and load torques do not depend on q, v; a load's φ(t) scales its term). Torsional spring:
  // k and c times [1 −1; −1 1] on (θ_a, θ_b). For a spring with d = p_b − p_a, D = ∂d/∂q (2 × nv),
  // force f on b and F = Dᵀ f: K = −Dᵀ (∂f/∂d D + ∂f/∂ḋ ∂(D v)/∂q) − (∂Dᵀ/∂q) f, C = −Dᵀ ∂f/∂ḋ D.
  // With flexible bodies, the central differences of MechanicalSystem::ForceJacobians.
  void ForceJacobians(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                      Eigen::MatrixXd* K, Eigen::MatrixXd* C) const override;
  // "<body>.x", "<body>.y", "<body>.theta", and "<body>.eta<i>" (i = 1..m) for flexible bodies.
  std::string PositionName(int i) const override;
  // "<body>.vx", "<body>.vy", "<body>.vtheta", "<body>.veta<i>".
  std::string VelocityName(int i) const override;
  // Reactions of every joint (PlanarJointReaction) from the multipliers `lambda` of `rows` (e.g.
  // events::Simulation's active rows and their λ); rows that are not joint or driver rows are
  // ignored, and a joint none of whose rows is in `rows` gets zeros. Throws
  // std::invalid_argument if lambda and rows differ in size.
  std::vector<PlanarJointReaction> JointReactions(double t, const Eigen::VectorXd& q,
                                                  std::span<const int> rows,
                                                  const Eigen::VectorXd& lambda) const;

 private:
  std::shared_ptr<const PlanarModel> model_;
  // m_i g on the translation of every rigid body (zeros elsewhere): the part of F that depends
  // on nothing, which Forces copies instead of summing it per call (0 + m g = m g, the same bits).
  Eigen::VectorXd rigid_gravity_;
};

}  // namespace saltus::engine
