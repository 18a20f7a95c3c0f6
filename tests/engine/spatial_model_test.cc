#include "engine/spatial_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/block_sparse.h"
#include "engine/constrained_dynamics.h"
#include "engine/rotation.h"

namespace saltus::engine {
namespace {

using Eigen::Matrix3d;
using Eigen::Vector3d;
using Eigen::Vector4d;
using Eigen::VectorXd;

std::vector<int> AllRows(const MechanicalSystem& s) {
  std::vector<int> rows(static_cast<std::size_t>(s.num_constraints()));
  for (int i = 0; i < s.num_constraints(); ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

Vector4d RandomQuaternion(std::mt19937& rng) {
  std::normal_distribution<double> n(0.0, 1.0);
  Vector4d Q(n(rng), n(rng), n(rng), n(rng));
  return Q / Q.norm();
}
Vector3d RandomVec(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(-scale, scale);
  return {u(rng), u(rng), u(rng)};
}

SpatialBody Body(const std::string& name, double mass, const Vector3d& com) {
  SpatialBody body;
  body.name = name;
  body.mass = mass;
  Matrix3d J;
  J << 0.3, 0.02, -0.01, 0.02, 0.2, 0.03, -0.01, 0.03, 0.25;  // not principal
  body.inertia = mass * J;
  body.com = com;
  return body;
}

// Random q (unit quaternions) and v.
void RandomState(const SpatialMultibodySystem& s, std::mt19937& rng, VectorXd* q, VectorXd* v) {
  const int n = s.model().num_bodies();
  q->resize(7 * n);
  v->resize(6 * n);
  for (int i = 0; i < n; ++i) {
    q->segment<3>(7 * i) = RandomVec(rng, 1.0);
    q->segment<4>(7 * i + 3) = RandomQuaternion(rng);
    v->segment<6>(6 * i) << RandomVec(rng, 1.0), RandomVec(rng, 2.0);
  }
}

// ---- Rotations ------------------------------------------------------------------------------

TEST(Rotation, ExpLogAndMatrix) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 20; ++trial) {
    const Vector3d theta = RandomVec(rng, 2.0);
    const Vector4d Q = QuaternionExp(theta);
    // Round-off of a few operations on O(1) numbers.
    EXPECT_NEAR(Q.norm(), 1.0, 4e-16);
    EXPECT_LT((QuaternionLog(Q) - theta).norm(), 1e-14);
    const Matrix3d R = QuaternionToRotation(Q);
    EXPECT_LT((R.transpose() * R - Matrix3d::Identity()).norm(), 1e-14);
    EXPECT_LT((RotationToQuaternion(R) - (Q(0) < 0 ? Vector4d(-Q) : Q)).norm(), 1e-14);
    // exp(θ) rotates by |θ| about θ (Rodrigues).
    const Eigen::AngleAxisd aa(theta.norm(), theta.normalized());
    EXPECT_LT((R - aa.toRotationMatrix()).norm(), 1e-14);
  }
  // Tiny angles use the series: exp(θ) = (1 − |θ|²/8, θ/2) to O(|θ|³).
  const Vector3d tiny(1e-9, -2e-9, 3e-9);
  EXPECT_LT((QuaternionExp(tiny).tail<3>() - 0.5 * tiny).norm(), 1e-25);
  // Below φ = 1e-3 both components come from series; they equal the trigonometric form to
  // round-off of O(1) numbers (2 ulp), right up to the switch, and keep |Q| = 1.
  for (const double phi : {1e-7, 1e-4, 5e-4, 0.999e-3}) {
    const Vector3d axis = Vector3d(1.0, -2.0, 0.5).normalized();
    const Vector4d Q = QuaternionExp(phi * axis);
    EXPECT_NEAR(Q(0), std::cos(0.5 * phi), 4.5e-16) << phi;
    EXPECT_LT((Q.tail<3>() - std::sin(0.5 * phi) * axis).norm(), 4.5e-16 * phi) << phi;
    EXPECT_NEAR(Q.norm(), 1.0, 4.5e-16) << phi;
  }
}

TEST(Rotation, BodyAngularVelocityKinematics) {
  // d/ds R(Q ⊗ exp(s ω/2)) at s = 0 is R [ω]×: ω is the body-frame angular velocity.
  std::mt19937 rng(2);
  const Vector4d Q = RandomQuaternion(rng);
  const Vector3d w = RandomVec(rng, 1.0);
  const double eps = 1e-5;
  const Matrix3d dR = (QuaternionToRotation(QuaternionMultiply(Q, QuaternionExp(eps * w))) -
                       QuaternionToRotation(QuaternionMultiply(Q, QuaternionExp(-eps * w)))) /
                      (2 * eps);
  // Central difference: O(eps²) truncation ~1e-10 plus round-off ε/eps ~1e-11.
  EXPECT_LT((dR - QuaternionToRotation(Q) * Skew(w)).norm(), 1e-9);
}

// ---- One free body ---------------------------------------------------------------------------

std::shared_ptr<SpatialMultibodySystem> FreeBody(const Vector3d& com, const Vector3d& gravity) {
  SpatialModelBuilder builder;
  builder.AddBody(Body("B", 2.5, com));
  builder.SetGravity(gravity);
  return std::make_shared<SpatialMultibodySystem>(builder.Build());
}

TEST(SpatialBody, IntegratePositionKeepsUnitQuaternion) {
  auto system = FreeBody(Vector3d::Zero(), Vector3d::Zero());
  std::mt19937 rng(3);
  VectorXd q, v;
  RandomState(*system, rng, &q, &v);
  const VectorXd q0 = q, v0 = v;
  // Varying ω (as in a simulation): each product of unit quaternions rounds the norm by O(ε)
  // with a random sign, so after 1e5 updates the drift is a random walk, √1e5 · ε ≈ 7e-14.
  std::normal_distribution<double> noise(0.0, 0.05);
  double worst = 0.0;
  for (int k = 0; k < 100000; ++k) {
    VectorXd vk = v;
    for (int c = 3; c < 6; ++c) vk(c) += noise(rng);
    system->IntegratePosition(q, vk, 1e-3, &q);
    worst = std::max(worst, std::abs(q.segment<4>(3).norm() - 1.0));
  }
  EXPECT_LT(worst, 1e-13);
  // The same factor exp(h ω / 2) applied 1e5 times (constant ω and h) rounds the same way each
  // time: the drift is then linear, below ε/2 per update (measured 5e-17), 1e5 · ε/2 ≈ 1e-11.
  q = q0;
  worst = 0.0;
  for (int k = 0; k < 100000; ++k) {
    system->IntegratePosition(q, v0, 1e-3, &q);
    worst = std::max(worst, std::abs(q.segment<4>(3).norm() - 1.0));
  }
  EXPECT_LT(worst, 1.2e-11);
  // Constant v is followed exactly: r + 100 ṙ and Q ⊗ exp(100 ω / 2), up to the rounding of
  // 1e5 sums of size up to 100 (1e5 · 100 ε ≈ 2e-9 at worst).
  EXPECT_LT((q.head<3>() - (q0.head<3>() + 100.0 * v0.head<3>())).norm(), 2e-9);
  const Vector4d Q_exact =
      QuaternionMultiply(q0.segment<4>(3), QuaternionExp(100.0 * v0.tail<3>()));
  // 1e5 roundings of an O(1) product, linear at worst: 1e5 · ε ≈ 2e-11 per component.
  EXPECT_LT((q.segment<4>(3) - Q_exact).norm(), 1e-10);
}

TEST(SpatialBody, MassMatrixGivesKineticEnergyAboutCentreOfMass) {
  const Vector3d com(0.3, -0.2, 0.5);
  auto system = FreeBody(com, Vector3d::Zero());
  const SpatialBody& body = system->model().bodies()[0];
  EXPECT_FALSE(system->HasConstantMassMatrix());
  std::mt19937 rng(4);
  for (int trial = 0; trial < 10; ++trial) {
    VectorXd q, v;
    RandomState(*system, rng, &q, &v);
    const Matrix3d R = QuaternionToRotation(q.segment<4>(3));
    const Vector3d w = v.tail<3>();
    const Vector3d v_c = v.head<3>() + R * w.cross(com);
    const double T = 0.5 * body.mass * v_c.squaredNorm() + 0.5 * w.dot(body.inertia * w);
    // Round-off of sums of O(10) terms.
    EXPECT_NEAR(system->KineticEnergy(q, v), T, 1e-13 * T);
  }
}

TEST(SpatialBody, FreeMotionConservesMomentaAndFollowsGravity) {
  // Along the motion (q ⊕ s v, v + s v̇) with v̇ = M⁻¹ F: d/dt (m v_c) = m g and, about the
  // centre of mass, d/dt (R J_c ω) = 0 (Euler). Checks M, the gyroscopic and centripetal terms
  // of F, and gravity together, for a body frame offset from the centre of mass.
  const Vector3d com(0.3, -0.2, 0.5);
  const Vector3d gravity(0.0, 0.0, -9.81);
  auto system = FreeBody(com, gravity);
  const SpatialBody& body = system->model().bodies()[0];
  std::mt19937 rng(5);
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v, F;
    RandomState(*system, rng, &q, &v);
    Eigen::MatrixXd M;
    system->MassMatrix(q, &M);
    system->Forces(0.0, q, v, &F);
    const VectorXd vdot = M.llt().solve(F);
    auto momenta = [&](double s, Vector3d* p, Vector3d* L) {
      VectorXd qs;
      system->IntegratePosition(q, v, s, &qs);
      const VectorXd vs = v + s * vdot;
      const Matrix3d R = QuaternionToRotation(qs.segment<4>(3));
      *p = body.mass * (vs.head<3>() + R * vs.tail<3>().cross(com));
      *L = R * body.inertia * vs.tail<3>();
    };
    const double eps = 1e-5;
    Vector3d p1, L1, p2, L2;
    momenta(eps, &p1, &L1);
    momenta(-eps, &p2, &L2);
    // Central differences: truncation O(eps² · |d³/ds³|) ~ 1e-9 for these O(10) quantities, and
    // round-off ε |p| / eps ~ 1e-10.
    EXPECT_LT(((p1 - p2) / (2 * eps) - body.mass * gravity).norm(), 1e-8);
    EXPECT_LT(((L1 - L2) / (2 * eps)).norm(), 1e-8);
  }
}

// ---- Joints and drivers -----------------------------------------------------------------------

SpatialJoint Joint(const std::string& name, SpatialJointType type, int a, int b,
                   std::mt19937& rng) {
  SpatialJoint joint;
  joint.name = name;
  joint.type = type;
  joint.body_a = a;
  joint.body_b = b;
  joint.point_a = RandomVec(rng, 0.5);
  joint.point_b = RandomVec(rng, 0.5);
  joint.axis_a = RandomVec(rng, 1.0);
  joint.axis_b = RandomVec(rng, 1.0);
  joint.ref_a = RandomVec(rng, 1.0);
  joint.ref_b = RandomVec(rng, 1.0);
  joint.length = 0.7;
  return joint;
}

// Every joint type between two bodies and with the ground on either side, plus drivers with
// each profile. The rows are not meant to be consistent (random configurations).
std::shared_ptr<SpatialMultibodySystem> JointZoo() {
  std::mt19937 rng(6);
  SpatialModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.0, Vector3d(0.1, 0.2, -0.1)));
  const int B = builder.AddBody(Body("B", 2.0, Vector3d::Zero()));
  using T = SpatialJointType;
  const std::vector<std::pair<std::string, T>> types = {{"spherical", T::kSpherical},
                                                        {"revolute", T::kRevolute},
                                                        {"universal", T::kUniversal},
                                                        {"cylindrical", T::kCylindrical},
                                                        {"prismatic", T::kPrismatic},
                                                        {"fixed", T::kFixed},
                                                        {"planar", T::kPlanar},
                                                        {"distance", T::kDistance},
                                                        {"point_on_line", T::kPointOnLine},
                                                        {"point_on_plane", T::kPointOnPlane}};
  for (const auto& [name, type] : types) {
    builder.AddJoint(Joint(name + "_AB", type, A, B, rng));
    builder.AddJoint(Joint(name + "_gA", type, kGround, A, rng));
    builder.AddJoint(Joint(name + "_Bg", type, B, kGround, rng));
  }
  TimeProfile rate;
  rate.value0 = 0.3;
  rate.rate = 2.0;
  TimeProfile poly;
  poly.kind = TimeProfile::Kind::kPolynomial;
  poly.coefficients = {0.1, -0.5, 0.7, 0.4};
  TimeProfile sine;
  sine.kind = TimeProfile::Kind::kSine;
  sine.value0 = 0.2;
  sine.amplitude = 0.4;
  sine.frequency = 3.0;
  sine.phase = 0.5;
  auto driver = [&](const std::string& name, const std::string& joint, DriverKind kind,
                    const TimeProfile& p) {
    SpatialDriver d;
    d.name = name;
    d.kind = kind;
    d.profile = p;
    // Joints were added in the order of `types`, three each.
    int index = 0;
    for (std::size_t k = 0; k < types.size(); ++k) {
      for (const char* suffix : {"_AB", "_gA", "_Bg"}) {
        if (types[k].first + suffix == joint) d.joint = index;
        ++index;
      }
    }
    builder.AddDriver(d);
  };
  driver("drive_rev_rate", "revolute_AB", DriverKind::kAngle, rate);
  driver("drive_rev_poly", "revolute_gA", DriverKind::kAngle, poly);
  driver("drive_cyl_sine", "cylindrical_Bg", DriverKind::kAngle, sine);
  driver("drive_pri_poly", "prismatic_AB", DriverKind::kDisplacement, poly);
  driver("drive_pri_sine", "prismatic_gA", DriverKind::kDisplacement, sine);
  driver("drive_cyl_rate", "cylindrical_AB", DriverKind::kDisplacement, rate);
  return std::make_shared<SpatialMultibodySystem>(builder.Build());
}

TEST(SpatialJoints, RowCountsAndNames) {
  auto system = JointZoo();
  // 3 of each: spherical 3, revolute 5, universal 4, cylindrical 4, prismatic 5, fixed 6,
  // planar 3, distance 1, point-on-line 2, point-on-plane 1 → 34 × 3 = 102, + 6 drivers.
  EXPECT_EQ(system->num_constraints(), 108);
  EXPECT_EQ(system->num_joint_rows(), 108);
  EXPECT_EQ(system->constraint_info(0).name, "spherical_AB.x");
  EXPECT_EQ(system->constraint_info(102).name, "drive_rev_rate");
  EXPECT_EQ(system->JointRows(3).size(), 6u);  // revolute_AB: 5 rows + its driver
}

// The rigid layout the trajectory columns and scene files rely on: body i at q[7 i, 7 i + 7) and
// v[6 i, 6 i + 6), and every coordinate named after the body holding it (PositionName and
// VelocityName find the body from the offsets).
TEST(SpatialJoints, CoordinateOffsetsAndNamesFollowTheBodies) {
  SpatialModelBuilder builder;
  const int n = 5;  // odd and > 2: the bisection meets both halves
  for (int i = 0; i < n; ++i) builder.AddBody(Body("b" + std::to_string(i), 1.0, Vector3d::Zero()));
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  const SpatialModel& model = system->model();
  ASSERT_EQ(model.num_bodies(), n);
  EXPECT_EQ(model.num_q(), 7 * n);
  EXPECT_EQ(model.num_v(), 6 * n);
  EXPECT_EQ(system->nq(), model.num_q());
  EXPECT_EQ(system->nv(), model.num_v());
  const char* q_suffix[7] = {".x", ".y", ".z", ".qw", ".qx", ".qy", ".qz"};
  const char* v_suffix[6] = {".vx", ".vy", ".vz", ".wx", ".wy", ".wz"};
  for (int i = 0; i < n; ++i) {
    EXPECT_EQ(model.QOffset(i), 7 * i);
    EXPECT_EQ(model.VOffset(i), 6 * i);
    const std::string& name = model.bodies()[static_cast<std::size_t>(i)].name;
    for (int j = 0; j < 7; ++j) EXPECT_EQ(system->PositionName(7 * i + j), name + q_suffix[j]);
    for (int j = 0; j < 6; ++j) EXPECT_EQ(system->VelocityName(6 * i + j), name + v_suffix[j]);
  }
  EXPECT_THROW(system->PositionName(7 * n), std::out_of_range);
  EXPECT_THROW(system->VelocityName(-1), std::out_of_range);
}

TEST(SpatialJoints, JacobianMatchesFiniteDifferencesAlongExponentialMap) {
  auto system = JointZoo();
  const std::vector<int> rows = AllRows(*system);
  std::mt19937 rng(7);
  const double eps = 1e-6;
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    RandomState(*system, rng, &q, &v);
    const double t = 0.37 * trial;
    Eigen::MatrixXd G;
    system->ConstraintJacobian(t, q, rows, &G);
    // Directional derivative along q ⊕ s δ for each unit δ = e_j (columns of G).
    for (int j = 0; j < system->nv(); ++j) {
      VectorXd delta = VectorXd::Unit(system->nv(), j);
      VectorXd qp, qm, gp, gm;
      system->IntegratePosition(q, delta, eps, &qp);
      system->IntegratePosition(q, delta, -eps, &qm);
      system->ConstraintValues(t, qp, rows, &gp);
      system->ConstraintValues(t, qm, rows, &gm);
      const VectorXd fd = (gp - gm) / (2 * eps);
      // Central difference with step 1e-6: truncation eps² |g'''| ~ 1e-11 and round-off
      // ε |g| / eps ~ 1e-10 for O(1) rows.
      EXPECT_LT((fd - G.col(j)).lpNorm<Eigen::Infinity>(), 1e-8) << "column " << j;
    }
    // ∂g/∂t against a difference in t.
    VectorXd g_t, gp, gm;
    system->ConstraintTimeDerivative(t, q, rows, &g_t);
    system->ConstraintValues(t + eps, q, rows, &gp);
    system->ConstraintValues(t - eps, q, rows, &gm);
    EXPECT_LT(((gp - gm) / (2 * eps) - g_t).lpNorm<Eigen::Infinity>(), 1e-8);
  }
}

TEST(SpatialJoints, GammaMatchesSecondDifferencesAlongConstantVelocityMotion) {
  // With v constant, s ↦ (q ⊕ s v, t + s) is a motion with v̇ = 0, so d²g/ds² = γ(q, v, t).
  auto system = JointZoo();
  const std::vector<int> rows = AllRows(*system);
  std::mt19937 rng(8);
  const double eps = 1e-4;
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v;
    RandomState(*system, rng, &q, &v);
    const double t = 0.29 * trial;
    auto g_at = [&](double s) {
      VectorXd qs, g;
      system->IntegratePosition(q, v, s, &qs);
      system->ConstraintValues(t + s, qs, rows, &g);
      return g;
    };
    VectorXd gamma, g_t;
    system->ConstraintGamma(t, q, v, rows, &gamma);
    const VectorXd g0 = g_at(0.0), gp = g_at(eps), gm = g_at(-eps);
    // Second difference with step 1e-4: truncation eps² |g''''| / 12 ~ 1e-8 · 10 (v up to 2 rad/s,
    // profile frequencies 3 rad/s) and round-off 4 ε |g| / eps² ~ 1e-8.
    EXPECT_LT(((gp - 2 * g0 + gm) / (eps * eps) - gamma).lpNorm<Eigen::Infinity>(), 1e-6);
    // First difference: ġ = G v + ∂g/∂t.
    Eigen::MatrixXd G;
    system->ConstraintJacobian(t, q, rows, &G);
    system->ConstraintTimeDerivative(t, q, rows, &g_t);
    // Truncation eps² |g'''| / 6 ~ 1e-8 · 10; round-off ε / eps.
    EXPECT_LT(((gp - gm) / (2 * eps) - (G * v + g_t)).lpNorm<Eigen::Infinity>(), 1e-6);
  }
}

TEST(SpatialJoints, CachedRotationsFollowEveryNewState) {
  // The joint rows take each body's R(Q) from a per-thread cache filled once per evaluation
  // (issue 3 §8). Evaluate at q, overwrite q in place (same address) and evaluate again: every
  // result must equal the one of a thread that never saw the first q (an empty cache), and
  // single-row evaluations in reverse order.
  auto system = JointZoo();
  const std::vector<int> rows = AllRows(*system);
  std::mt19937 rng(11);
  VectorXd q, v, q_next, v_next;
  RandomState(*system, rng, &q, &v);
  RandomState(*system, rng, &q_next, &v_next);
  const double t = 0.41;
  struct Results {
    VectorXd g, gamma;
    Eigen::MatrixXd G, G_blocks;
  };
  auto evaluate = [&](const VectorXd& qe, Results* out) {
    system->ConstraintValues(t, qe, rows, &out->g);
    system->ConstraintGamma(t, qe, v_next, rows, &out->gamma);
    system->ConstraintJacobian(t, qe, rows, &out->G);
    BlockSparseRows G_sparse;
    ASSERT_TRUE(system->BlockSparseMatrices(t, qe, rows, nullptr, &G_sparse));
    out->G_blocks = G_sparse.ToDense();
  };
  Results cached, fresh;
  VectorXd q_work = q;
  evaluate(q_work, &cached);  // fills the cache at q
  q_work = q_next;            // same storage, new state
  evaluate(q_work, &cached);
  std::thread([&] { evaluate(q_next, &fresh); }).join();
  // Same formulas on the same numbers: the results agree to the last bit; a stale rotation from
  // the first state would be off by O(|q − q_next|) ~ 0.1-1.
  constexpr double kSame = 1e-14;
  EXPECT_LE((cached.g - fresh.g).lpNorm<Eigen::Infinity>(), kSame);
  EXPECT_LE((cached.gamma - fresh.gamma).lpNorm<Eigen::Infinity>(), kSame);
  EXPECT_LE((cached.G - fresh.G).lpNorm<Eigen::Infinity>(), kSame);
  EXPECT_LE((cached.G_blocks - fresh.G).lpNorm<Eigen::Infinity>(), kSame);
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    const int r = *it;
    VectorXd g_r, gamma_r;
    system->ConstraintValues(t, q_next, std::span<const int>(&r, 1), &g_r);
    system->ConstraintGamma(t, q_next, v_next, std::span<const int>(&r, 1), &gamma_r);
    EXPECT_LE(std::abs(g_r(0) - fresh.g(r)), kSame) << "row " << r;
    EXPECT_LE(std::abs(gamma_r(0) - fresh.gamma(r)), kSame) << "row " << r;
  }
}

TEST(SpatialJoints, AssembledJointsHaveZeroResidual) {
  // A body at the identity, joint frames at the same world point with the same axes: every
  // joint type is satisfied (the distance joint is given its actual length).
  SpatialModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.0, Vector3d::Zero()));
  using T = SpatialJointType;
  int k = 0;
  for (T type : {T::kSpherical, T::kRevolute, T::kCylindrical, T::kPrismatic, T::kFixed, T::kPlanar,
                 T::kPointOnLine, T::kPointOnPlane}) {
    SpatialJoint joint;
    joint.name = "j" + std::to_string(k++);
    joint.type = type;
    joint.body_a = kGround;
    joint.body_b = A;
    joint.point_a = Vector3d(1.0, 2.0, 3.0);
    joint.point_b = Vector3d(1.0, 2.0, 3.0);
    joint.axis_a = joint.axis_b = Vector3d(1.0, 1.0, 0.0);
    joint.ref_a = joint.ref_b = Vector3d(0.0, 0.0, 1.0);
    builder.AddJoint(joint);
  }
  SpatialJoint uni;
  uni.name = "universal";
  uni.type = T::kUniversal;
  uni.body_b = A;
  uni.axis_a = Vector3d::UnitX();
  uni.axis_b = Vector3d::UnitY();
  builder.AddJoint(uni);
  SpatialJoint dist;
  dist.name = "distance";
  dist.type = T::kDistance;
  dist.body_b = A;
  dist.point_b = Vector3d(0.0, 3.0, 4.0);
  dist.length = 5.0;
  builder.AddJoint(dist);
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  VectorXd g;
  system->ConstraintValues(0.0, system->model().InitialPositions(), AllRows(*system), &g);
  EXPECT_LT(g.lpNorm<Eigen::Infinity>(), 1e-15);  // exact up to round-off of O(1) products
}

// ---- Forces ------------------------------------------------------------------------------------

TEST(SpatialForces, ConservativeElementsArePotentialForces) {
  // Applied forces (model with elements minus the bare bodies) do power −dV/dt along q ⊕ s v.
  std::mt19937 rng(9);
  auto make = [&](bool with_elements) {
    std::mt19937 r(10);
    SpatialModelBuilder builder;
    const int A = builder.AddBody(Body("A", 1.0, Vector3d(0.1, 0.2, -0.1)));
    const int B = builder.AddBody(Body("B", 2.0, Vector3d(-0.2, 0.0, 0.1)));
    builder.AddJoint(Joint("hinge", SpatialJointType::kRevolute, A, B, r));
    if (with_elements) {
      builder.SetGravity(Vector3d(0.5, -9.81, 1.0));
      builder.AddSpringDamper({"s1", A, B, RandomVec(r, 0.5), RandomVec(r, 0.5), 30.0, 0.0, 0.4});
      builder.AddSpringDamper(
          {"s2", kGround, A, RandomVec(r, 0.5), RandomVec(r, 0.5), 7.0, 0.0, 0.0});
      builder.AddTorsionalSpring({"tor", 0, 5.0, 0.0, 0.3});
      SpatialLoad load;
      load.name = "push";
      load.body = B;
      load.force = Vector3d(1.0, -2.0, 0.5);
      load.point = Vector3d(0.3, 0.1, 0.2);
      builder.AddLoad(load);
    }
    return std::make_shared<SpatialMultibodySystem>(builder.Build());
  };
  auto full = make(true);
  auto bare = make(false);
  for (int trial = 0; trial < 5; ++trial) {
    VectorXd q, v, F, F0;
    RandomState(*full, rng, &q, &v);
    full->Forces(0.0, q, v, &F);
    bare->Forces(0.0, q, v, &F0);
    const double power = (F - F0).dot(v);
    const double eps = 1e-5;
    VectorXd qp, qm;
    full->IntegratePosition(q, v, eps, &qp);
    full->IntegratePosition(q, v, -eps, &qm);
    const double dV = (full->PotentialEnergy(0.0, qp) - full->PotentialEnergy(0.0, qm)) / (2 * eps);
    // Central difference: truncation eps² |V'''| ~ 1e-8 for V ~ 100; round-off ε V / eps ~ 1e-9.
    EXPECT_NEAR(power, -dV, 1e-7 * std::max(1.0, std::abs(power)));
  }
}

TEST(SpatialForces, DampersDissipateAndProfilesScaleLoads) {
  SpatialModelBuilder builder;
  const int A = builder.AddBody(Body("A", 1.0, Vector3d::Zero()));
  std::mt19937 r(11);
  builder.AddJoint(Joint("hinge", SpatialJointType::kRevolute, kGround, A, r));
  builder.AddSpringDamper({"d", kGround, A, Vector3d(1, 0, 0), Vector3d(0, 0.2, 0), 0.0, 3.0, 0.0});
  builder.AddTorsionalSpring({"td", 0, 0.0, 2.0, 0.0});
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  VectorXd q, v, F;
  std::mt19937 rng(12);
  for (int trial = 0; trial < 5; ++trial) {
    RandomState(*system, rng, &q, &v);
    system->Forces(0.0, q, v, &F);
    // Power of the dampers (the gyroscopic term −ω × Jω does no work).
    EXPECT_LT(F.dot(v), 0.0);
  }
  SpatialModelBuilder b2;
  b2.AddBody(Body("A", 1.0, Vector3d::Zero()));
  SpatialLoad load;
  load.name = "pulse";
  load.body = 0;
  load.force = Vector3d(0.0, 2.0, 0.0);
  load.torque = Vector3d(0.0, 0.0, 1.0);
  TimeProfile sine;
  sine.kind = TimeProfile::Kind::kSine;
  sine.amplitude = 1.0;
  sine.frequency = 2.0;
  load.scale = sine;
  b2.AddLoad(load);
  b2.SetForceCallback(
      [](double t, const VectorXd&, const VectorXd&, VectorXd* F_out) { (*F_out)(0) += t; });
  auto s2 = std::make_shared<SpatialMultibodySystem>(b2.Build());
  VectorXd q0 = s2->model().InitialPositions(), v0 = VectorXd::Zero(6);
  s2->Forces(0.25, q0, v0, &F);
  const double scale = std::sin(0.5);
  EXPECT_NEAR(F(0), 0.25, 1e-15);
  EXPECT_NEAR(F(1), 2.0 * scale, 1e-15);
  EXPECT_NEAR(F(5), scale, 1e-15);
}

TEST(TimeProfile, DerivativesMatchFiniteDifferences) {
  TimeProfile poly;
  poly.kind = TimeProfile::Kind::kPolynomial;
  poly.coefficients = {0.1, -0.5, 0.7, 0.4};
  // φ = 0.1 − 0.5 t + 0.7 t² + 0.4 t³ at t = 2: 0.1 − 1 + 2.8 + 3.2, φ̇ = −0.5 + 2.8 + 4.8,
  // φ̈ = 1.4 + 4.8.
  const Vector3d p = poly.Evaluate(2.0);
  EXPECT_NEAR(p(0), 5.1, 1e-14);
  EXPECT_NEAR(p(1), 7.1, 1e-14);
  EXPECT_NEAR(p(2), 6.2, 1e-14);
}

// ---- Reactions ----------------------------------------------------------------------------------

TEST(SpatialReactions, DriverHoldsAHorizontalBarAgainstGravity) {
  // Bar of mass m, centre of mass at (L/2, 0, 0) of its frame, revolute about z at the origin,
  // angle driver held at 0 with gravity −g ŷ: the driver supplies the torque m g L/2 about z and
  // the bearing carries the weight (statics).
  const double m = 3.0, L = 0.8, g = 9.81;
  SpatialModelBuilder builder;
  SpatialBody bar = Body("bar", m, Vector3d(L / 2, 0.0, 0.0));
  builder.AddBody(bar);
  SpatialJoint hinge;
  hinge.name = "hinge";
  hinge.type = SpatialJointType::kRevolute;
  hinge.body_b = 0;
  builder.AddJoint(hinge);
  SpatialDriver drive;
  drive.name = "motor";
  drive.joint = 0;
  builder.AddDriver(drive);
  builder.SetGravity(Vector3d(0.0, -g, 0.0));
  auto system = std::make_shared<SpatialMultibodySystem>(builder.Build());
  const VectorXd q = system->model().InitialPositions();
  const VectorXd v = VectorXd::Zero(6);
  const std::vector<int> rows = AllRows(*system);
  ConstrainedDynamics dynamics(*system);
  VectorXd vdot, lambda;
  ASSERT_TRUE(dynamics.Solve(0.0, q, v, rows, &vdot, &lambda).ok);
  const auto reactions = system->JointReactions(0.0, q, rows, lambda);
  ASSERT_EQ(reactions.size(), 1u);
  // Round-off of the KKT solve on O(10) numbers.
  EXPECT_LT((reactions[0].force_on_b - Vector3d(0.0, m * g, 0.0)).norm(), 1e-12);
  EXPECT_LT((reactions[0].torque_on_b - Vector3d(0.0, 0.0, m * g * L / 2)).norm(), 1e-12);
  EXPECT_LT(vdot.norm(), 1e-12);
}

// ---- Validation ---------------------------------------------------------------------------------

TEST(SpatialBuilder, RejectsBadInputNamingTheItem) {
  auto expect_error = [](auto&& fn, const std::string& text) {
    try {
      fn();
      ADD_FAILURE() << "no exception, expected one containing: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  SpatialModelBuilder builder;
  builder.AddBody(Body("A", 1.0, Vector3d::Zero()));
  SpatialBody bad = Body("bad", 1.0, Vector3d::Zero());
  bad.quaternion = Vector4d(1.0, 0.1, 0.0, 0.0);
  expect_error([&] { builder.AddBody(bad); }, "body 'bad': quaternion must be unit");
  bad.quaternion = Vector4d(1.0 + 1e-8, 0.0, 0.0, 0.0);
  builder.AddBody(bad);  // close to unit: normalized with a warning
  ASSERT_EQ(builder.warnings().size(), 1u);
  bad.name = "nonsym";
  bad.quaternion = Vector4d(1.0, 0.0, 0.0, 0.0);
  bad.inertia(0, 1) = 0.5;
  expect_error([&] { builder.AddBody(bad); }, "body 'nonsym': inertia must be symmetric");
  bad.name = "singular";
  bad.inertia = Matrix3d::Zero();
  bad.inertia(0, 0) = 1.0;
  expect_error([&] { builder.AddBody(bad); }, "body 'singular': inertia must be positive definite");
  SpatialJoint joint;
  joint.name = "j";
  joint.body_a = 0;
  joint.body_b = 7;
  expect_error([&] { builder.AddJoint(joint); }, "joint 'j': body_b: unknown body index 7");
  joint.body_b = kGround;
  joint.axis_a = Vector3d::Zero();
  expect_error([&] { builder.AddJoint(joint); }, "joint 'j': axis_a must be non-zero");
  joint.axis_a = Vector3d::UnitZ();
  joint.type = SpatialJointType::kSpherical;
  builder.AddJoint(joint);
  SpatialDriver driver;
  driver.name = "d";
  driver.joint = 0;
  expect_error([&] { builder.AddDriver(driver); },
               "driver 'd': an angle driver needs a revolute or cylindrical joint");
  driver.kind = DriverKind::kDisplacement;
  expect_error([&] { builder.AddDriver(driver); }, "displacement driver needs a prismatic");
  expect_error(
      [&] {
        builder.AddTorsionalSpring({"t", 0, 1.0, 0.0, 0.0});
      },
      "torsional spring 't': needs a revolute joint");
  joint.name = "rod";
  joint.type = SpatialJointType::kDistance;
  joint.length = 0.0;
  expect_error([&] { builder.AddJoint(joint); }, "joint 'rod': distance joint length must be > 0");
}

}  // namespace
}  // namespace saltus::engine
