// Spatial multibody model in absolute coordinates: rigid bodies and flexible beams.
//
// A flexible body (SpatialBody::beam; engine/flexible_beam_spatial.h, docs/flexible-bodies.md)
// has the frame coordinates of a rigid body followed by its m modal amplitudes η: q_i = (r, Q, η)
// (7 + m), v_i = (ṙ, ω, η̇) (6 + m). Its mass block M_b(Q, η) and forces F_b (quadratic velocity,
// gravity, elastic, damping) are the beam's; q ⊕ h v adds h η̇ to η. Joints attach to a node k of
// its centreline: the point p = r + R ū(X_k, η), ṗ = ṙ − R [ū]× ω + R B η̇ (G gains Bᵀ Rᵀ c on
// the η̇ columns of a row ∂(c·ṗ)/∂v), v̇-free acceleration R â (â of the beam header); or to a
// point of the node's section at an arm d, r + R (ū + Λ_k d). The joint's frame there is the
// section's: its axes are R Λ_k ā, Λ_k = R_z(a) R_y(−b) R_x(φ) of the node's bending slopes and
// twist (SpatialFlexibleBeam::Section), so a fixed or revolute joint at a node holds the section,
// loading the bending slopes and the twist (SpatialJoint::arm_a; the terms in spatial_model.cc,
// MakeJointPoint and JointPoint).
//
// Body i has q_i = (r, Q) (7): r (3) the world position of its body-frame origin and Q (4) the
// unit quaternion (w, x, y, z) of its orientation R = R(Q); v_i = (ṙ, ω) (6): ṙ in the world
// frame and ω the angular velocity in the body frame, so q̇_i = T(q) v_i with ṙ = ṙ and
// Q̇ = ½ Q ⊗ (0, ω). The position update q ⊕ h v is r + h ṙ, Q ⊗ exp(h ω / 2) (engine/rotation.h):
// quaternions stay unit to round-off. The ground is body kGround (fixed, not in q).
//
// Mass: body frame at o, centre of mass at c̄ (body frame), inertia J_c about the centre of mass
// (body axes, symmetric positive definite), J_o = J_c + m (‖c̄‖² I − c̄ c̄ᵀ) about o (Steiner).
// With v_c = ṙ + R (ω × c̄) the kinetic energy is ½ m ‖v_c‖² + ½ ωᵀ J_c ω, so
//
//   M_i = [ m I          −m R [c̄]× ]        F_i = [ f − m R (ω × (ω × c̄))  ]
//         [ m [c̄]× Rᵀ     J_o      ],              [ n̄_o − ω × J_o ω        ]
//
// (Newton for the centre of mass, Euler about the moving point o; e.g. Shabana, Dynamics of
// Multibody Systems, 3rd ed., Sec. 3.6-3.7), f the world applied force and n̄_o the applied moment
// about o in the body frame. A world force f at body point s̄ contributes (f, s̄ × Rᵀ f).
//
// Kinematics used by every row: a body point p = r + R s̄ has ṗ = ṙ + R (ω × s̄) and the v̇-free
// part of p̈ is R (ω × (ω × s̄)); a body vector u = R ū has u̇ = R (ω × ū), ü_free = R (ω × (ω × ū)).
// Hence ∂(c·ṗ)/∂(ṙ, ω) = (c, s̄ × Rᵀ c) and ∂(c·u̇)/∂ω = ū × Rᵀ c.
//
// Joints are built from four primitive rows between joint frames (origin s̄, axes x̄, ȳ, z̄ in
// each body; the standard set of Haug, Computer Aided Kinematics and Dynamics of Mechanical
// Systems, 1989, Sec. 9.2-9.3, "dot-1", "dot-2", spherical and distance constraints), with
// d = p_b − p_a:
//   point      p_a − p_b = 0 (3 rows)            dot1(u, w)  u_a · w_b = 0
//   dot2(u)    u_a · d = 0                       distance    (d·d − L²)/(2L) = 0
// and G = ∂ġ/∂v, γ = g̈ − G v̇ from the kinematics above (γ_dot1 = ü_a·w_b + 2 u̇_a·ẇ_b + u_a·ẅ_b
// with the v̇-free accelerations, and likewise for the others).
//   joint           rows                                             names
//   spherical       point                                            .x .y .z
//   revolute        point, dot1(z_a,x_b), dot1(z_a,y_b)              + .rot1 .rot2
//   universal       point, dot1(z_a,z_b)                             + .rot1
//   cylindrical     dot1(z_a,x_b), dot1(z_a,y_b), dot2(x_a), dot2(y_a)  .rot1 .rot2 .trans1 .trans2
//   prismatic       cylindrical + dot1(x_a,y_b)                      + .rot3
//   fixed           point, dot1(z_a,x_b), dot1(z_a,y_b), dot1(x_a,y_b)  .x .y .z .rot1 .rot2 .rot3
//   planar          dot1(z_a,x_b), dot1(z_a,y_b), dot2(z_a)           .rot1 .rot2 .normal
//   distance        distance (L > 0)                                 .distance
//   point_on_line   dot2(x_a), dot2(y_a)   (p_b on the line p_a + s z_a)  .trans1 .trans2
//   point_on_plane  dot2(z_a)              (p_b on the plane through p_a ⟂ z_a)  .normal
// The joint frames are given by a point, an axis z (normalized) and a reference x (made
// orthogonal to z; any perpendicular when absent or parallel) in each body. A revolute,
// cylindrical or prismatic joint is assembled when z_a = z_b; its angle θ turns x_a to x_b about
// z_a; a universal joint when z_a ⟂ z_b.
//
// Drivers (rheonomic rows, one per driver, named "<driver>"): φ(t) from a TimeProfile with exact
// φ̇, φ̈.
//   angle        (revolute, cylindrical)  g = u_a(t) · x_b with ū_a(t) = cos φ ȳ_a − sin φ x̄_a,
//                so g = sin(θ − φ(t)); ∂g/∂t = (R_a ∂ū_a/∂t) · x_b, and γ gains the terms of the
//                time-dependent ū_a: ü_a,free = R_a(ω×(ω×ū) + 2 ω×∂ₜū + ∂ₜ²ū).
//   displacement (prismatic, cylindrical) g = z_a · d − s(t); ∂g/∂t = −ṡ, γ gains −s̈.
//
// Force elements: uniform gravity (at the centres of mass), translational spring-dampers
// between two points (tension k (ℓ − L₀) + c ℓ̇; same conventions as the planar model),
// torsional spring-dampers on a revolute joint (torque −k (θ − θ₀) − c θ̇ about n ≈ z_a on b, the
// opposite on a; θ = atan2(x_b·y_a, x_b·x_a) ∈ (−π, π], θ̇ = (R_b ω_b − R_a ω_a)·z_a), loads
// (a world force at a body point and a world torque, both scaled by an optional TimeProfile),
// and one user callback that adds to F. Potential energy: gravity, springs (½k(ℓ−L₀)²),
// torsional springs (½k(θ−θ₀)²) and constant loads' forces (−f·p); load torques, profiles and
// the callback are not counted.
//
// SpatialModel is immutable; SpatialModelBuilder validates each item and throws
// std::invalid_argument naming it: unique non-empty names ("ground" reserved), mass > 0, inertia
// symmetric positive definite, quaternions of norm within 1e-6 of 1 (normalized then; otherwise
// an error), body indices valid and distinct, zero-length axes, distance L ≤ 0, drivers on a
// joint type that cannot take them, torsional springs on a non-revolute joint, non-finite numbers.
#pragma once

#include <Eigen/Dense>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/flexible_beam_spatial.h"
#include "engine/mechanical_system.h"
#include "engine/planar_model.h"  // kGround
#include "engine/time_profile.h"

namespace saltus::engine {

struct SpatialBody {
  std::string name;
  double mass = 1.0;                                      // kg, > 0
  Eigen::Matrix3d inertia = Eigen::Matrix3d::Identity();  // kg·m², about the centre of mass,
                                                          // body axes, symmetric positive definite
  Eigen::Vector3d com = Eigen::Vector3d::Zero();          // centre of mass in the body frame
  Eigen::Vector3d position = Eigen::Vector3d::Zero();     // initial r
  Eigen::Vector4d quaternion = Eigen::Vector4d(1, 0, 0, 0);    // initial Q = (w, x, y, z)
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();          // initial ṙ (world)
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // initial ω (body frame)
  // Set: a flexible body, a SpatialFlexibleBeam (engine/flexible_beam_spatial.h) with I_xy =
  // beam->second_moment and I_xz = second_moment_xz. Its frame is (r, Q) above, its modal
  // amplitudes η (initially 0) follow in q and v; mass, inertia and com are then the beam's (the
  // fields above are ignored).
  std::optional<BeamProperties> beam = std::nullopt;
  double second_moment_xz = 0.0;  // m⁴, > 0 for a flexible body
  // Set: the sections of the flexible body twist (St Venant torsion, G and J; 6n modes).
  std::optional<BeamTorsion> torsion = std::nullopt;
  // Initial η and η̇ of a flexible body: empty (zero) or m entries.
  Eigen::VectorXd modal_position = Eigen::VectorXd();
  Eigen::VectorXd modal_velocity = Eigen::VectorXd();
};

enum class SpatialJointType {
  kSpherical,
  kRevolute,
  kUniversal,
  kCylindrical,
  kPrismatic,
  kFixed,
  kPlanar,
  kDistance,
  kPointOnLine,
  kPointOnPlane
};

struct SpatialJoint {
  std::string name;
  SpatialJointType type = SpatialJointType::kRevolute;
  int body_a = kGround;
  int body_b = kGround;
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();  // joint-frame origin, body-a frame
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  Eigen::Vector3d axis_a = Eigen::Vector3d::UnitZ();  // joint-frame z, body-a frame
  Eigen::Vector3d axis_b = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d ref_a = Eigen::Vector3d::Zero();  // joint-frame x hint (0: automatic)
  Eigen::Vector3d ref_b = Eigen::Vector3d::Zero();
  double length = 0.0;  // distance joint: L > 0
  // A node k ∈ [0, n] of flexible body_a / body_b (−1: the point is point_a / point_b of the body
  // frame). With a node the joint point is the node of the deformed centreline, r + R ū(X_k, η),
  // point_a / point_b must be zero, and the joint axes are axes of the node's section: they turn
  // with its bending slopes and, on a beam with torsion, with its twist (Λ of
  // SpatialFlexibleBeam::Section). Torsional springs, prismatic friction and joint limits on a
  // joint at a node use the section's frame too (SpatialJointSide): their torques and forces load
  // the slopes and the twist.
  int node_a = -1;
  int node_b = -1;
  // With node_a / node_b: a point of the node's section off the centreline (an arm), its offset
  // in the section's axes Λ_k (tilted by the slopes, twisted by φ_k). The joint point is then
  // r + R (ū(X_k, η) + Λ_k d), and its rows put a torque on the twist. Zero: the node itself.
  Eigen::Vector3d arm_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d arm_b = Eigen::Vector3d::Zero();
};

struct SpatialDriver {
  std::string name;
  int joint = 0;
  DriverKind kind = DriverKind::kAngle;
  TimeProfile profile;
};

// Linear spring-damper between two points: on b the force −(k (ℓ − L₀) + c ℓ̇) e, e = d/ℓ,
// d = p_b − p_a, the opposite on a (with L₀ = 0 the elastic part is −k d).
struct SpatialSpringDamper {
  std::string name;
  int body_a = kGround;
  int body_b = kGround;
  Eigen::Vector3d point_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d point_b = Eigen::Vector3d::Zero();
  double stiffness = 0.0;    // N/m, ≥ 0
  double damping = 0.0;      // N·s/m, ≥ 0
  double rest_length = 0.0;  // m, ≥ 0
  // A node k of flexible body_a / body_b (−1: the point is point_a / point_b of the body frame,
  // which must then be zero): the end is the point of the node's section at the arm,
  // p = r + R (ū(X_k, η) + Λ_k d) (as a joint's, SpatialJoint::arm_a), and the end's force f has
  // the generalized force (f, s̄ × Rᵀf, Bᵀ Rᵀ f) (SpatialJointSide::AddPointJacobian).
  int node_a = -1;
  int node_b = -1;
  Eigen::Vector3d arm_a = Eigen::Vector3d::Zero();  // only with node_a
  Eigen::Vector3d arm_b = Eigen::Vector3d::Zero();  // only with node_b
};

struct SpatialTorsionalSpring {
  std::string name;
  int joint = 0;           // a revolute joint
  double stiffness = 0.0;  // N·m/rad, ≥ 0
  double damping = 0.0;    // N·m·s/rad, ≥ 0
  double angle0 = 0.0;     // rad
};

struct SpatialLoad {
  std::string name;
  int body = 0;
  Eigen::Vector3d force = Eigen::Vector3d::Zero();   // N, world frame
  Eigen::Vector3d point = Eigen::Vector3d::Zero();   // application point, body frame
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();  // N·m, world frame
  std::optional<TimeProfile> scale;                  // force and torque × φ(t) when set
  // A node of flexible `body` (−1: none). The force then acts at the node of the deformed
  // centreline and the torque on its section (generalized forces (f, ū × Rᵀf, Bᵀ Rᵀ f) and
  // (0, Rᵀn, Eᵀ Rᵀ n), SpatialJointSide); `point` must be zero.
  int node = -1;
};

// Coulomb friction in a prismatic joint, evaluated explicitly from the joint's normal force of
// the last accepted step (half-implicit seed, Sec. 3.4; no static/kinetic distinction): on body b
//   f_b = −μ N sign(u) z_a   at the joint point of b (the opposite on a at its joint point),
// u = (ṗ_b − ṗ_a)·z_a the sliding velocity along the joint axis z_a (sign(0) = 0), N = |(I − z_a
// z_aᵀ) f_reaction,b| the magnitude of the joint's reaction force on b perpendicular to the axis
// (JointReaction::force_on_b from the multipliers passed to AcceptStep; the seed's slider moves
// along x with its normal force along z, which this generalizes). N = 0 until the first
// AcceptStep.
struct SpatialPrismaticFriction {
  std::string name;
  int joint = 0;    // a prismatic joint
  double mu = 0.0;  // ≥ 0
};

// Adds user forces to F (nv, already holding the model's forces).
using ForceCallback = std::function<void(double t, const Eigen::VectorXd& q,
                                         const Eigen::VectorXd& v, Eigen::VectorXd* F)>;

// Joint frame after validation: origin and orthonormal axes (columns x, y, z) in each body.
struct JointFrames {
  Eigen::Vector3d point_a, point_b;
  Eigen::Matrix3d axes_a, axes_b;
};

class SpatialModel {
 public:
  // Coordinates of a rigid body: q holds (r, Q) (position, unit quaternion), v holds (ṙ, ω) (world
  // velocity, body-frame angular velocity).
  static constexpr int kRigidNq = 7;
  static constexpr int kRigidNv = 6;

  int num_bodies() const { return static_cast<int>(bodies_.size()); }
  // Body i's coordinates are q[QOffset(i), QOffset(i) + 7) and v[VOffset(i), VOffset(i) + 6),
  // bodies in order; num_q() and num_v() are the sizes of q and v. The offsets are built with the
  // bodies (SpatialModelBuilder::AddBody) so that a body with more coordinates (a flexible body's
  // modal amplitudes after its frame's 7 / 6) only changes how they are built. No bounds check.
  int QOffset(int body) const { return q_offset_[static_cast<std::size_t>(body)]; }
  int VOffset(int body) const { return v_offset_[static_cast<std::size_t>(body)]; }
  int num_q() const { return num_q_; }
  int num_v() const { return num_v_; }
  const std::vector<SpatialBody>& bodies() const { return bodies_; }
  // The beam of a flexible body, nullptr for a rigid one; its m modal amplitudes are
  // q[QOffset(i) + 7, + m) and v[VOffset(i) + 6, + m).
  const SpatialFlexibleBeam* beam(int body) const {
    return beams_[static_cast<std::size_t>(body)].get();
  }
  bool has_flexible_bodies() const { return has_flexible_; }
  const std::vector<SpatialJoint>& joints() const { return joints_; }
  const std::vector<JointFrames>& joint_frames() const { return frames_; }
  const std::vector<SpatialDriver>& drivers() const { return drivers_; }
  const std::vector<SpatialSpringDamper>& springs() const { return springs_; }
  const std::vector<SpatialTorsionalSpring>& torsional_springs() const { return torsional_; }
  const std::vector<SpatialLoad>& loads() const { return loads_; }
  const std::vector<SpatialPrismaticFriction>& prismatic_frictions() const { return frictions_; }
  const ForceCallback& force_callback() const { return callback_; }
  const Eigen::Vector3d& gravity() const { return gravity_; }
  // Index of the body with this name, kGround for "ground", -2 if none.
  int FindBody(const std::string& name) const;
  int FindJoint(const std::string& name) const;  // -1 if none
  // Initial q (num_q) and v (num_v).
  Eigen::VectorXd InitialPositions() const;
  Eigen::VectorXd InitialVelocities() const;

 private:
  friend class SpatialModelBuilder;
  std::vector<SpatialBody> bodies_;
  std::vector<std::shared_ptr<const SpatialFlexibleBeam>> beams_;  // null for rigid bodies
  bool has_flexible_ = false;
  std::vector<int> q_offset_, v_offset_;  // per body (QOffset, VOffset)
  int num_q_ = 0, num_v_ = 0;
  std::vector<SpatialJoint> joints_;
  std::vector<JointFrames> frames_;
  std::vector<SpatialDriver> drivers_;
  std::vector<SpatialSpringDamper> springs_;
  std::vector<SpatialTorsionalSpring> torsional_;
  std::vector<SpatialLoad> loads_;
  std::vector<SpatialPrismaticFriction> frictions_;
  ForceCallback callback_;
  Eigen::Vector3d gravity_ = Eigen::Vector3d::Zero();
};

class SpatialModelBuilder {
 public:
  // Each Add validates its item and throws std::invalid_argument naming it. Returns the index.
  // A quaternion whose norm is within 1e-6 of 1 is normalized and `warnings()` records it.
  int AddBody(const SpatialBody& body);
  int AddJoint(const SpatialJoint& joint);
  int AddDriver(const SpatialDriver& driver);
  int AddSpringDamper(const SpatialSpringDamper& spring);
  int AddTorsionalSpring(const SpatialTorsionalSpring& spring);
  int AddLoad(const SpatialLoad& load);
  // Throws std::invalid_argument when the joint is not prismatic or μ < 0 / not finite.
  int AddPrismaticFriction(const SpatialPrismaticFriction& friction);
  void SetForceCallback(ForceCallback callback);
  void SetGravity(const Eigen::Vector3d& g);
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::shared_ptr<const SpatialModel> Build();

 private:
  SpatialModel model_;
  std::vector<std::string> warnings_;
};

// The joint frame of one side of a joint, in the world: for a body frame (or the ground) the
// frame's point and axes; at a node of a flexible body the point of the node's section at its
// arm and the section's axes (R Λ ā, Λ of SpatialFlexibleBeam::Section), which turn with the
// bending slopes and the twist at Ω = R (ω + ω_s), ω_s = E η̇. With v: the point's velocity ṗ and
// v̇-free acceleration (ṙ + R (ω × s̄ + ṡ), R (ω × (ω × s̄) + 2 ω × ṡ + s̈_free)) and the frame's
// angular velocity Ω and v̇-free angular acceleration α = R (ω × ω_s + κ) (zero at a body frame),
// so that a frame vector u has u̇ = Ω × u, ü_free = α × u + Ω × (Ω × u). Used by what reads a
// joint's frame besides its rows: torsional springs, prismatic friction, joint limits.
struct SpatialJointSide {
  int body = kGround;
  int v0 = 0;  // VOffset(body)
  bool node = false;
  Eigen::Matrix3d R = Eigen::Matrix3d::Identity();  // the body frame's rotation
  Eigen::Vector3d s = Eigen::Vector3d::Zero();      // the point in the body frame, p = r + R s̄
  Eigen::Vector3d point = Eigen::Vector3d::Zero(), point_rate = Eigen::Vector3d::Zero(),
                  point_acc = Eigen::Vector3d::Zero();
  Eigen::Matrix3d axes = Eigen::Matrix3d::Identity();  // world axes, columns x, y, z
  Eigen::Vector3d omega = Eigen::Vector3d::Zero(), alpha = Eigen::Vector3d::Zero();
  Eigen::Matrix<double, 3, Eigen::Dynamic> B, E;  // at a node: ∂s̄/∂η and ∂ω_s/∂η̇ (3 × m)

  // row += ∂(c·ṗ)/∂v: (c, s̄ × Rᵀc) on (ṙ, ω) and Bᵀ Rᵀ c on η̇ (a world force c at the point has
  // this generalized force).
  template <class Row>
  void AddPointJacobian(const Eigen::Vector3d& c, Row&& row) const {
    if (body == kGround) return;
    const Eigen::Vector3d c_body = R.transpose() * c;
    row.template segment<3>(v0) += c.transpose();
    row.template segment<3>(v0 + 3) += s.cross(c_body).transpose();
    if (node) row.segment(v0 + 6, B.cols()) += (B.transpose() * c_body).transpose();
  }
  // row += ∂(w·Ω)/∂v: Rᵀ w on ω and Eᵀ Rᵀ w on η̇ (a world torque w on the frame has this
  // generalized force).
  template <class Row>
  void AddRotationJacobian(const Eigen::Vector3d& w, Row&& row) const {
    if (body == kGround) return;
    const Eigen::Vector3d w_body = R.transpose() * w;
    row.template segment<3>(v0 + 3) += w_body.transpose();
    if (node) row.segment(v0 + 6, E.cols()) += (E.transpose() * w_body).transpose();
  }
};

// Side a (side_b false) or b of joint `joint` at q and, when v is non-null, v.
SpatialJointSide JointSideOf(const SpatialModel& model, int joint, bool side_b,
                             const Eigen::VectorXd& q, const Eigen::VectorXd* v);

// Force and torque a joint (with its drivers) exerts, from the multipliers of its rows: the
// generalized constraint force Gᵀλ on each body, reduced to the joint point of that body, world
// frame. For the ground side the entries are zero.
struct JointReaction {
  Eigen::Vector3d force_on_a = Eigen::Vector3d::Zero();
  Eigen::Vector3d torque_on_a = Eigen::Vector3d::Zero();  // about the joint point on a
  Eigen::Vector3d force_on_b = Eigen::Vector3d::Zero();
  Eigen::Vector3d torque_on_b = Eigen::Vector3d::Zero();  // about the joint point on b
};

// The model as a MechanicalSystem. Its first constraint block holds the joint rows in joint
// order (names in the table above, "<joint>.<row>"), followed by one row per driver (named
// "<driver>"). The block is always added (possibly empty), so joint and driver rows are global
// rows [0, num_joint_rows()). Evaluation with q or v of the wrong size throws
// std::invalid_argument.
class SpatialMultibodySystem : public MechanicalSystem {
 public:
  explicit SpatialMultibodySystem(std::shared_ptr<const SpatialModel> model);

  const SpatialModel& model() const { return *model_; }
  int nq() const override { return model_->num_q(); }
  int nv() const override { return model_->num_v(); }
  void MassMatrix(const Eigen::VectorXd& q, Eigen::MatrixXd* M) const override;
  bool HasConstantMassMatrix() const override { return constant_mass_; }
  void Forces(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
              Eigen::VectorXd* F) const override;
  void IntegratePosition(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double h,
                         Eigen::VectorXd* q_next) const override;
  // Per body: x − x_base on the translation, Log(Q_base⁻¹ ⊗ Q) (body-frame rotation vector, the
  // inverse of IntegratePosition's Q_base ⊗ exp(θ/2)) on the rotation.
  bool PositionDifference(const Eigen::VectorXd& q, const Eigen::VectorXd& q_base,
                          Eigen::VectorXd* theta) const override;
  // Per body: identity on the translation; on the rotation (R = R₀ Exp(θ), body-frame ω) the
  // inverse right Jacobian of SO(3): θ̇ = ω + ½ θ×ω + (1/|θ|² − (1 + cos|θ|)/(2|θ| sin|θ|)) θ×(θ×ω).
  void DexpInv(const Eigen::VectorXd& theta, const Eigen::VectorXd& v,
               Eigen::VectorXd* theta_dot) const override;
  double PotentialEnergy(double t, const Eigen::VectorXd& q) const override;
  // 6 × 6 mass blocks (one per body) and block-sparse G: a joint or driver row has the 6-blocks of
  // its two bodies (one when the other is the ground); rows of other blocks (contacts) are
  // evaluated densely and their non-zero body blocks kept. Rigid models only: with a flexible body
  // (blocks of 6 + m) it returns false and the callers take the dense path.
  bool BlockSparseMatrices(double t, const Eigen::VectorXd& q, std::span<const int> rows,
                           MassBlocks* M, BlockSparseRows* G) const override;
  // "<body>.x .y .z .qw .qx .qy .qz" and "<body>.vx .vy .vz .wx .wy .wz", then for a flexible
  // body "<body>.eta<i>" and "<body>.veta<i>" (i = 1..m).
  std::string PositionName(int i) const override;
  std::string VelocityName(int i) const override;
  // Prismatic friction: stores each friction joint's normal force N from λ (see
  // SpatialPrismaticFriction).
  bool UsesAcceptedSteps() const override { return !model_->prismatic_frictions().empty(); }
  void AcceptStep(double t, const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                  std::span<const int> rows, const Eigen::VectorXd& lambda) const override;
  // N of each prismatic friction element (order of SpatialModel::prismatic_frictions()).
  const std::vector<double>& friction_normal_forces() const { return friction_normal_; }

  int num_joint_rows() const { return num_joint_rows_; }
  // Global rows of joint j (its own rows followed by those of the drivers acting on it).
  const std::vector<int>& JointRows(int j) const { return joint_rows_.at(static_cast<size_t>(j)); }
  // Reactions of every joint from the multipliers `lambda` of `rows` (e.g. Simulation::
  // active_rows() and Multipliers()); rows that are not joint or driver rows are ignored.
  std::vector<JointReaction> JointReactions(double t, const Eigen::VectorXd& q,
                                            std::span<const int> rows,
                                            const Eigen::VectorXd& lambda) const;

 private:
  // What Forces needs of each body, contiguous (issue 3 §8: a long chain's per-step data should
  // stay in cache): mass, centre of mass and J_o = J_c + m (‖c̄‖² I − c̄ c̄ᵀ).
  struct BodyInertia {
    Eigen::Matrix3d J_o;
    Eigen::Vector3d com;
    double mass = 0.0;
  };
  std::shared_ptr<const SpatialModel> model_;
  std::vector<BodyInertia> inertia_;
  mutable std::vector<double> friction_normal_;  // N per friction element (AcceptStep)
  bool constant_mass_ = true;
  int num_joint_rows_ = 0;
  std::vector<std::vector<int>> joint_rows_;
  std::shared_ptr<const ConstraintBlock> joint_block_;  // the first block (SpatialJointBlock)
};

}  // namespace saltus::engine
