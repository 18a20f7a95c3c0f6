// Tests of engine/flexible_beam_spatial.h: the mass matrix and the quadratic velocity vector
// against finite differences of the point positions (the kinetic energy ½∫ρ|ṗ|² and
// d'Alembert's −∫ρ Pᵀ p̈), the power identity vᵀF = −½ vᵀṀv, the potential forces against ∂V,
// the static deflections against the closed forms in both bending planes and axially, the
// clamped frequencies against Euler–Bernoulli in both planes, and planar motion against the
// planar beam.
#include "engine/flexible_beam_spatial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numbers>
#include <vector>

#include "engine/rotation.h"
#include "flexible_test_models.h"

namespace saltus::engine {
namespace {

using testing::KaneBeam;

// I_xz of the tests: 2.25 I_xy, so that the x–z bending frequencies are 1.5× the x–y ones.
constexpr double kSecondMomentXZ = 4.5e-7;

// A spatial state q = (r, Q, η) and its update q ⊕ h v (as SpatialMultibodySystem's).
struct State {
  Eigen::Vector3d r;
  Eigen::Vector4d Q;
  Eigen::VectorXd eta;
  State Advance(const Eigen::VectorXd& v, double h) const {
    return {r + h * v.head<3>(), QuaternionMultiply(Q, QuaternionExp(h * v.segment<3>(3))),
            eta + h * v.tail(eta.size())};
  }
};

State SampleState(int m) {
  State q;
  q.r = Eigen::Vector3d(0.3, -1.2, 0.7);
  q.Q = Eigen::Vector4d(0.8, 0.2, -0.4, 0.3).normalized();
  q.eta = Eigen::VectorXd::LinSpaced(m, 0.4, -0.3);  // a tip deflection of a few 0.1 m
  return q;
}

Eigen::VectorXd SampleVelocity(int m) {
  Eigen::VectorXd v(6 + m);
  v << 0.5, -0.2, 0.1, 0.7, -0.4, 1.1, Eigen::VectorXd::LinSpaced(m, -0.6, 0.5);
  return v;
}

// World position of the quadrature point g.
Eigen::Vector3d Position(const SpatialFlexibleBeam& beam, std::size_t g, const State& q) {
  return q.r + QuaternionToRotation(q.Q) *
                   beam.Motion(beam.quadrature_points()[g], q.eta, Eigen::VectorXd()).u;
}

// P = ∂ṗ/∂v of point g by central differences along q ⊕ h e_i (truncation O(h²)).
Eigen::MatrixXd VelocityMatrixByDifferences(const SpatialFlexibleBeam& beam, std::size_t g,
                                            const State& q, double h) {
  const int nv = 6 + beam.num_modes();
  Eigen::MatrixXd P(3, nv);
  for (int i = 0; i < nv; ++i) {
    const Eigen::VectorXd e = Eigen::VectorXd::Unit(nv, i);
    P.col(i) = (Position(beam, g, q.Advance(e, h)) - Position(beam, g, q.Advance(e, -h))) / (2 * h);
  }
  return P;
}

// The centreline's inertial force −Σ_g w_g P_gᵀ p̈_g along q(t) = q ⊕ t v (v constant), with p̈_g
// by second differences (h = 1e-4: truncation ~h² ~1e-8, round-off ~1e-16 · 10 / h² ~ 1e-7 of
// p̈ ~ 1–10 m/s²) and P_g by central differences (1e-5).
Eigen::VectorXd CentrelineInertialForceByDifferences(const SpatialFlexibleBeam& beam,
                                                     const State& q, const Eigen::VectorXd& v) {
  const double h = 1e-4;
  Eigen::VectorXd f = Eigen::VectorXd::Zero(6 + beam.num_modes());
  for (std::size_t g = 0; g < beam.quadrature_points().size(); ++g) {
    const Eigen::Vector3d a = (Position(beam, g, q.Advance(v, h)) - 2 * Position(beam, g, q) +
                               Position(beam, g, q.Advance(v, -h))) /
                              (h * h);
    f -= beam.quadrature_weights()[g] * VelocityMatrixByDifferences(beam, g, q, 1e-5).transpose() *
         a;
  }
  return f;
}

// The beam's velocity forces at (q, v) without the elastic force −Kη (AddForces adds both).
Eigen::VectorXd InertialForces(const SpatialFlexibleBeam& beam, const State& q,
                               const Eigen::VectorXd& v) {
  const int m = beam.num_modes();
  Eigen::VectorXd F = Eigen::VectorXd::Zero(6 + m);
  beam.AddForces(QuaternionToRotation(q.Q), q.eta, v.segment<3>(3), v.tail(m),
                 Eigen::Vector3d::Zero(), F);
  F.tail(m).array() += beam.frequencies().array().square() * q.eta.array();
  return F;
}

Eigen::MatrixXd Mass(const SpatialFlexibleBeam& beam, const State& q) {
  const int nv = 6 + beam.num_modes();
  Eigen::MatrixXd M(nv, nv);
  beam.MassMatrix(QuaternionToRotation(q.Q), q.eta, M);
  return M;
}

// Every mode of 4 elements: 8 + 8 bending, 4 axial.
SpatialFlexibleBeam AllModesBeam(bool stiffening = true) {
  BeamProperties p = KaneBeam(4, 20);
  p.geometric_stiffening = stiffening;
  return SpatialFlexibleBeam(p, kSecondMomentXZ);
}

// M = ∂²T/∂v² with T = ½ Σ_g w_g |ṗ_g|² + ½ ωᵀ J_sec ω, ṗ_g = P_g v from differences of the
// positions (a beam without torsion). With h = 1e-5 the truncation is ~h² |p'''| ~ 1e-9 and the
// round-off ~1e-16 · 10 m / h = 1e-10 relative to the entries of P (~10 m for the rotations);
// 1e-7 of the largest entry bounds it.
void ExpectMassMatrixIsTheKineticEnergyOfThePoints(const SpatialFlexibleBeam& beam) {
  const State q = SampleState(beam.num_modes());
  const int nv = 6 + beam.num_modes();
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(nv, nv);
  for (std::size_t g = 0; g < beam.quadrature_points().size(); ++g) {
    const Eigen::MatrixXd P = VelocityMatrixByDifferences(beam, g, q, 1e-5);
    expected += beam.quadrature_weights()[g] * P.transpose() * P;
  }
  expected.block<3, 3>(3, 3) += Eigen::Matrix3d(beam.section_inertia().asDiagonal());
  const Eigen::MatrixXd M = Mass(beam, q);
  EXPECT_LT((M - expected).cwiseAbs().maxCoeff(), 1e-7 * M.cwiseAbs().maxCoeff());
  EXPECT_NEAR(M(0, 0), beam.mass(), 1e-12 * beam.mass());
}

// Along q(t) = q ⊕ t v (v constant: r̈ = 0, ω̇ = 0, η̈ = 0) each point has p̈ = R â, the velocity
// part of its acceleration, so the inertial force is −Σ_g w_g P_gᵀ p̈_g with p̈ from second
// differences (h = 1e-4: truncation ~h² ~1e-8, round-off ~1e-16 · 10 / h² ~ 1e-7 of p̈ ~ 1–10
// m/s²). 1e-5 of the largest entry bounds both. The elastic force −Kη is added back; the
// sections' gyroscopic moment −ω × J_sec ω is the rigid body's (a beam without torsion).
void ExpectQuadraticVelocityVectorIsDAlembertsInertiaForce(const SpatialFlexibleBeam& beam) {
  const int m = beam.num_modes();
  const State q = SampleState(m);
  const Eigen::VectorXd v = SampleVelocity(m);
  Eigen::VectorXd expected = CentrelineInertialForceByDifferences(beam, q, v);
  const Eigen::Vector3d omega = v.segment<3>(3);
  expected.segment<3>(3) -= omega.cross(beam.section_inertia().cwiseProduct(omega));
  const Eigen::VectorXd F = InertialForces(beam, q, v);
  EXPECT_LT((F - expected).cwiseAbs().maxCoeff(), 1e-5 * expected.cwiseAbs().maxCoeff())
      << "\nF " << F.transpose() << "\nexpected " << expected.transpose();
}

TEST(SpatialFlexibleBeam, MassMatrixIsTheKineticEnergyOfThePoints) {
  for (const bool stiffening : {true, false}) {
    SCOPED_TRACE(stiffening ? "stiffening" : "no stiffening");
    ExpectMassMatrixIsTheKineticEnergyOfThePoints(AllModesBeam(stiffening));
  }
}

TEST(SpatialFlexibleBeam, QuadraticVelocityVectorIsDAlembertsInertiaForce) {
  for (const bool stiffening : {true, false}) {
    SCOPED_TRACE(stiffening ? "stiffening" : "no stiffening");
    ExpectQuadraticVelocityVectorIsDAlembertsInertiaForce(AllModesBeam(stiffening));
  }
}

// vᵀ F_qv = −½ vᵀ Ṁ v at (q, v): T = ½ vᵀ M v is conserved by M v̇ = F_qv (free body, no elastic
// or applied forces) only then; Ṁ by central differences along q ⊕ t v (h = 1e-5, truncation
// ~1e-10).
void ExpectQuadraticVelocityForcesDoNoWork(const SpatialFlexibleBeam& beam, const State& q,
                                           const Eigen::VectorXd& v) {
  const int m = beam.num_modes(), nv = 6 + m;
  const double h = 1e-5;
  const Eigen::MatrixXd M_dot =
      (Mass(beam, q.Advance(v, h)) - Mass(beam, q.Advance(v, -h))) / (2 * h);
  Eigen::VectorXd F = Eigen::VectorXd::Zero(nv);
  beam.AddForces(QuaternionToRotation(q.Q), q.eta, v.segment<3>(3), v.tail(m),
                 Eigen::Vector3d::Zero(), F);
  F.tail(m).array() += beam.frequencies().array().square() * q.eta.array();
  const double power = v.dot(F), expected = -0.5 * v.dot(M_dot * v);
  EXPECT_NEAR(power, expected, 1e-7 * std::abs(expected)) << "power " << power;
}

// F_i = −dV/dt along q ⊕ t e_i by central differences, h = 1e-4: the elastic energy of the
// axial modes (ω up to 1e4 rad/s) reaches V ~ 1e7 J, so the round-off is ~1e-16 · 1e7 / h ~
// 1e-5; the truncation h²/6 · d³V/dt³ ~ 1e-7 (gravity's rotation terms, |g·R s| ~ 100 J).
void ExpectPotentialForcesDerive(const SpatialFlexibleBeam& beam, const State& q) {
  const int m = beam.num_modes(), nv = 6 + m;
  const Eigen::Vector3d g(1.0, -9.81, 2.0);
  Eigen::VectorXd F = Eigen::VectorXd::Zero(nv);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(m);
  beam.AddForces(QuaternionToRotation(q.Q), q.eta, Eigen::Vector3d::Zero(), zero, g, F);
  const auto V = [&](const State& s) {
    return beam.PotentialEnergy(s.r, QuaternionToRotation(s.Q), s.eta, g);
  };
  const double h = 1e-4;
  for (int i = 0; i < nv; ++i) {
    const Eigen::VectorXd e = Eigen::VectorXd::Unit(nv, i);
    const double dV = (V(q.Advance(e, h)) - V(q.Advance(e, -h))) / (2 * h);
    EXPECT_NEAR(F(i), -dV, 1e-5 * std::max(1.0, std::abs(dV))) << "coordinate " << i;
  }
}

TEST(SpatialFlexibleBeam, QuadraticVelocityForcesDoNoWork) {
  const SpatialFlexibleBeam beam = AllModesBeam();
  ExpectQuadraticVelocityForcesDoNoWork(beam, SampleState(beam.num_modes()),
                                        SampleVelocity(beam.num_modes()));
}

TEST(SpatialFlexibleBeam, GravityAndElasticForcesDeriveFromThePotential) {
  const SpatialFlexibleBeam beam = AllModesBeam();
  ExpectPotentialForcesDerive(beam, SampleState(beam.num_modes()));
}

TEST(SpatialFlexibleBeam, StaticDeflectionsAreTheClosedFormsInBothPlanes) {
  // Clamped cantilever, tip force f (body frame) at η = 0: K η = B(L)ᵀ f, tip displacement
  // B(L) η. With every mode this is the FE solution, and Hermite (linear axial) elements give the
  // exact nodal displacements of a beam under nodal loads: F L³/(3 E I) in each bending plane
  // and F L/(E A) axially, to round-off (1e-9 relative), with no displacement across the load.
  BeamProperties p = KaneBeam(8, 40);
  const SpatialFlexibleBeam beam(p, kSecondMomentXZ);
  const SpatialBeamPoint tip = beam.PointAt(p.length);
  const Eigen::MatrixXd B = beam.Motion(tip, Eigen::VectorXd::Zero(40), Eigen::VectorXd()).B;
  const double L = p.length, E = p.youngs_modulus, load = 10.0;
  const Eigen::Vector3d closed(load * L / (E * p.area),
                               load * std::pow(L, 3) / (3 * E * p.second_moment),
                               load * std::pow(L, 3) / (3 * E * kSecondMomentXZ));
  for (int axis = 0; axis < 3; ++axis) {
    const Eigen::VectorXd eta = (B.transpose() * (load * Eigen::Vector3d::Unit(axis)))
                                    .cwiseQuotient(beam.frequencies().cwiseAbs2());
    const Eigen::Vector3d d = B * eta;
    EXPECT_NEAR(d(axis), closed(axis), 1e-9 * closed(axis)) << "axis " << axis;
    for (int other = 0; other < 3; ++other) {
      if (other != axis) {
        EXPECT_NEAR(d(other), 0.0, 1e-9 * closed(axis)) << axis << other;
      }
    }
  }
}

TEST(SpatialFlexibleBeam, ClampedFrequenciesAreEulerBernoulliInBothPlanes) {
  // ω = (βL)² √(E I/(ρA L⁴)), βL the roots of cos cosh = −1 (Blevins, Formulas for Natural
  // Frequency and Mode Shape, Table 8-1), with I_xy for the x–y modes and I_xz for the x–z ones;
  // the first axial frequency (π/2) √(E/ρ)/L (Blevins Table 8-16). 16 elements: the planar test
  // measured ω₃ errors of 4e-5 (bending, O(h⁴)); the linear axial elements with consistent mass
  // overestimate by (k h)²/24 = 4e-4 at k h = π/32 (O(h²)). Bounds: 2e-4 and 1e-3.
  BeamProperties p = KaneBeam(16, 80);
  const SpatialFlexibleBeam beam(p, kSecondMomentXZ);
  const double beta_l[3] = {1.875104069, 4.694091133, 7.854757438};
  std::vector<double> xy, xz, axial;
  for (int j = 0; j < beam.num_modes(); ++j) {
    const double w = beam.frequencies()(j);
    switch (beam.mode_kinds()[static_cast<std::size_t>(j)]) {
      case SpatialModeKind::kBendingXY:
        xy.push_back(w);
        break;
      case SpatialModeKind::kBendingXZ:
        xz.push_back(w);
        break;
      case SpatialModeKind::kAxial:
        axial.push_back(w);
        break;
      case SpatialModeKind::kTorsion:
        ADD_FAILURE() << "a torsion mode in a beam without torsion";
        break;
    }
  }
  ASSERT_EQ(xy.size(), 32u);
  ASSERT_EQ(xz.size(), 32u);
  ASSERT_EQ(axial.size(), 16u);
  const double rho_a_l4 = p.density * p.area * std::pow(p.length, 4);
  for (int i = 0; i < 3; ++i) {
    const double b2 = beta_l[i] * beta_l[i];
    const double w_xy = b2 * std::sqrt(p.youngs_modulus * p.second_moment / rho_a_l4);
    const double w_xz = b2 * std::sqrt(p.youngs_modulus * kSecondMomentXZ / rho_a_l4);
    EXPECT_NEAR(xy[static_cast<std::size_t>(i)], w_xy, 2e-4 * w_xy) << "mode " << i + 1;
    EXPECT_NEAR(xz[static_cast<std::size_t>(i)], w_xz, 2e-4 * w_xz) << "mode " << i + 1;
  }
  const double w_axial =
      0.5 * std::numbers::pi * std::sqrt(p.youngs_modulus / p.density) / p.length;
  EXPECT_NEAR(axial[0], w_axial, 1e-3 * w_axial);
  EXPECT_GT(axial[0], w_axial);  // consistent mass: an upper bound
}

TEST(SpatialFlexibleBeam, PlanarMotionIsThePlanarBeam) {
  // Rotation about z, ω = ω_z e_z, only x–y and axial modes deformed, gravity in the plane: the
  // spatial M and F restricted to (x, y, ω_z, planar modes) are the planar beam's (same FE
  // shapes, same quadrature) to round-off, once the sections' ρ I_xy L (1.5e-5 of M_θθ here),
  // which the planar beam neglects, is added to M_θθ; the out-of-plane forces vanish.
  BeamProperties p = KaneBeam(4, 8);
  const SpatialFlexibleBeam beam(p, kSecondMomentXZ);
  std::vector<int> in_plane;  // spatial mode indices of the planar modes
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] != SpatialModeKind::kBendingXZ) {
      in_plane.push_back(j);
    }
  }
  const int k = static_cast<int>(in_plane.size()), m = beam.num_modes();
  ASSERT_GE(k, 2);
  ASSERT_LT(k, m);
  p.modes = k;
  const FlexibleBeam planar(p);
  const double theta = 0.7, omega = 1.3;
  const Eigen::VectorXd eta_p = Eigen::VectorXd::LinSpaced(k, 0.5, -0.2);
  const Eigen::VectorXd eta_dot_p = Eigen::VectorXd::LinSpaced(k, -0.4, 0.3);
  Eigen::VectorXd eta = Eigen::VectorXd::Zero(m), eta_dot = Eigen::VectorXd::Zero(m);
  std::vector<int> map = {0, 1, 5};  // planar (x, y, θ) → spatial (x, y, ω_z)
  for (int i = 0; i < k; ++i) {
    eta(in_plane[static_cast<std::size_t>(i)]) = eta_p(i);
    eta_dot(in_plane[static_cast<std::size_t>(i)]) = eta_dot_p(i);
    map.push_back(6 + in_plane[static_cast<std::size_t>(i)]);
  }
  const Eigen::Matrix3d R = Eigen::AngleAxisd(theta, Eigen::Vector3d::UnitZ()).toRotationMatrix();
  Eigen::MatrixXd M_s(6 + m, 6 + m), M_p(3 + k, 3 + k);
  beam.MassMatrix(R, eta, M_s);
  planar.MassMatrix(theta, eta_p, M_p);
  M_p(2, 2) += beam.section_inertia().z();  // the planar beam neglects the sections' ρ I_xy L
  Eigen::VectorXd F_s = Eigen::VectorXd::Zero(6 + m), F_p = Eigen::VectorXd::Zero(3 + k);
  beam.AddForces(R, eta, Eigen::Vector3d(0, 0, omega), eta_dot, Eigen::Vector3d(0, -9.81, 0), F_s);
  planar.AddForces(theta, eta_p, omega, eta_dot_p, Eigen::Vector2d(0, -9.81), F_p);
  const double m_scale = M_p.cwiseAbs().maxCoeff(), f_scale = F_p.cwiseAbs().maxCoeff();
  for (int a = 0; a < 3 + k; ++a) {
    EXPECT_NEAR(F_s(map[a]), F_p(a), 1e-12 * f_scale) << "force " << a;
    for (int b = 0; b < 3 + k; ++b) {
      EXPECT_NEAR(M_s(map[a], map[b]), M_p(a, b), 1e-12 * m_scale) << a << ", " << b;
    }
  }
  for (const int out : {2, 3, 4}) EXPECT_NEAR(F_s(out), 0.0, 1e-12 * f_scale) << out;
  for (int j = 0; j < m; ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] == SpatialModeKind::kBendingXZ) {
      EXPECT_NEAR(F_s(6 + j), 0.0, 1e-12 * f_scale) << "x-z mode " << j;
    }
  }
}

TEST(SpatialFlexibleBeam, CurveIsTheXDerivativeOfThePoint) {
  // ū_X, ū_XX and B_X = ∂B/∂X against central differences in X of ū and B (h = 1e-5 inside an
  // element: truncation h² ū''' ≲ 1e-9 for a tip deflection of a few 0.1 m, round-off 1e-16/h²
  // ≈ 1e-6 for the second difference), with and without stiffening.
  for (const bool stiffening : {true, false}) {
    BeamProperties p = KaneBeam(4, 12);
    p.geometric_stiffening = stiffening;
    const SpatialFlexibleBeam beam(p, kSecondMomentXZ);
    const Eigen::VectorXd eta = SampleState(12).eta;
    const Eigen::VectorXd none;
    for (const double X : {0.7, 3.1, 5.55, 8.4}) {
      const double h = 1e-5;
      const SpatialBeamCurve curve = beam.Curve(beam.PointAt(X), eta);
      const SpatialBeamMotion plus = beam.Motion(beam.PointAt(X + h), eta, none);
      const SpatialBeamMotion minus = beam.Motion(beam.PointAt(X - h), eta, none);
      const SpatialBeamMotion at = beam.Motion(beam.PointAt(X), eta, none);
      EXPECT_LT((curve.u_x - (plus.u - minus.u) / (2 * h)).norm(), 1e-8) << X;
      EXPECT_LT((curve.u_xx - (plus.u - 2 * at.u + minus.u) / (h * h)).norm(), 1e-4) << X;
      EXPECT_LT((curve.B_x - (plus.B - minus.B) / (2 * h)).cwiseAbs().maxCoeff(), 1e-8) << X;
    }
  }
}

TEST(SpatialFlexibleBeam, NearestAndLowestPointsAreTheMinimaAlongTheBeam) {
  // NearestX(c) and LowestX(n) against the best of 20001 samples of ‖ū − c‖ and n·ū (spacing
  // 5e-4 m: the sampled minimum is above the true one by at most ~(spacing)² · curvature), and
  // stationary where inside: φ_X = 0 to round-off.
  const SpatialFlexibleBeam beam(KaneBeam(4, 12), kSecondMomentXZ);
  const Eigen::VectorXd eta = SampleState(12).eta;
  const Eigen::VectorXd none;
  const double L = beam.length();
  const auto u = [&](double X) { return beam.Motion(beam.PointAt(X), eta, none).u; };
  int interior = 0;
  for (const Eigen::Vector3d& c :
       {Eigen::Vector3d(3.0, 0.5, -0.2), Eigen::Vector3d(7.5, -1.0, 1.0),
        Eigen::Vector3d(-1.0, 0.2, 0.1), Eigen::Vector3d(5.0, 0.1, 0.3)}) {
    const double X = beam.NearestX(c, eta);
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= 20000; ++k) best = std::min(best, (u(L * k / 20000) - c).norm());
    EXPECT_LE((u(X) - c).norm(), best + 1e-12) << c.transpose();
    EXPECT_GT((u(X) - c).norm(), best - 1e-5) << c.transpose();
    if (X > 0.0 && X < L) {
      ++interior;
      const SpatialBeamCurve curve = beam.Curve(beam.PointAt(X), eta);
      EXPECT_LT(std::abs(curve.u_x.dot(u(X) - c)), 1e-14) << c.transpose();
    }
  }
  for (const Eigen::Vector3d& n : {Eigen::Vector3d(0.0, 1.0, 0.0), Eigen::Vector3d(0.0, 0.0, -1.0),
                                   Eigen::Vector3d(0.05, -0.3, 1.0).normalized()}) {
    const double X = beam.LowestX(n, eta);
    double best = std::numeric_limits<double>::infinity();
    for (int k = 0; k <= 20000; ++k) best = std::min(best, n.dot(u(L * k / 20000)));
    EXPECT_LE(n.dot(u(X)), best + 1e-12) << n.transpose();
    EXPECT_GT(n.dot(u(X)), best - 1e-5) << n.transpose();
    if (X > 0.0 && X < L) {
      ++interior;
      EXPECT_LT(std::abs(n.dot(beam.Curve(beam.PointAt(X), eta).u_x)), 1e-14) << n.transpose();
    }
  }
  EXPECT_GE(interior, 3);
}

TEST(SpatialFlexibleBeam, InputIsValidated) {
  BeamProperties p = KaneBeam(4, 21);
  EXPECT_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"), std::invalid_argument);
  p.modes = 20;
  EXPECT_NO_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"));
  EXPECT_THROW(SpatialFlexibleBeam(p, 0.0, "beam b"), std::invalid_argument);
  p.youngs_modulus = -1;
  EXPECT_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"), std::invalid_argument);
  // Craig–Bampton: at least the 5 boundary coordinates of the tip node (u, v, θ_z, w, θ_y).
  p = KaneBeam(4, 4);
  p.reduction = BeamReduction::kCraigBampton;
  p.boundary_nodes = {4};
  try {
    SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b");
    ADD_FAILURE() << "4 modes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[5, 20]"), std::string::npos) << e.what();
  }
  p.modes = 5;
  EXPECT_NO_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"));
  p.boundary_nodes = {5};  // nodes 0..4
  EXPECT_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"), std::invalid_argument);
  p.boundary_nodes = {};
  p.reference = BeamReference::kFree;  // a free beam needs a boundary node
  EXPECT_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, "beam b"), std::invalid_argument);
  try {
    SpatialFlexibleBeam(KaneBeam(4, 21), kSecondMomentXZ, "beam b");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("beam b"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("[1, 20]"), std::string::npos) << e.what();
  }
}

// ---- Torsion (St Venant; engine/flexible_beam_spatial.h, "Torsion") ---------------------------

// G and J of the torsion tests: aluminium-like G = E/(2(1 + 0.33)) of the Kane beam and
// J = 0.8 I_p (a section that warps: J < I_p), so that the torsion frequencies
// √(G J/(ρ I_p)) π/(2L) ≈ 4.2e2 rad/s lie among the bending ones of the 10 m beam.
BeamTorsion TestTorsion() {
  const BeamProperties p = KaneBeam(1, 1);
  return BeamTorsion{p.youngs_modulus / 2.66, 0.8 * (p.second_moment + kSecondMomentXZ)};
}

// Every mode of 4 elements with torsion: 8 + 8 bending, 4 axial, 4 torsion. `thick` multiplies
// the second moments (and J) by 1e3: the sections' inertia ρ I_p L is then 5 % of M_ωω instead of
// 5e-5, so that an error in their terms shows above the centreline's in the ω rows.
SpatialFlexibleBeam TorsionBeam(bool stiffening = true, bool thick = false) {
  BeamProperties p = KaneBeam(4, 24);
  p.geometric_stiffening = stiffening;
  const double scale = thick ? 1e3 : 1.0;
  p.second_moment *= scale;
  BeamTorsion torsion = TestTorsion();
  torsion.torsion_constant *= scale;
  return SpatialFlexibleBeam(p, scale * kSecondMomentXZ, torsion);
}

// The largest |s_φ| of torsion mode j over the nodes (the twist per unit η).
double TwistScale(const SpatialFlexibleBeam& beam, int j) {
  double scale = 0.0;
  for (int k = 0; k <= beam.properties().elements; ++k) {
    scale = std::max(scale, std::abs(beam.PointAt(beam.NodeX(k)).twist(j)));
  }
  return scale;
}

// SampleState and SampleVelocity with the torsion modes' amplitudes scaled to twists of up to
// 0.4 rad and rates of up to 0.6 rad/s (the unit η of a torsion mode is a twist of ~10 rad:
// the shaft's ρ I_p L is 0.0195 kg m²).
State TwistedState(const SpatialFlexibleBeam& beam) {
  State q = SampleState(beam.num_modes());
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion) {
      q.eta(j) /= TwistScale(beam, j);
    }
  }
  return q;
}
Eigen::VectorXd TwistingVelocity(const SpatialFlexibleBeam& beam) {
  Eigen::VectorXd v = SampleVelocity(beam.num_modes());
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion) {
      v(6 + j) /= TwistScale(beam, j);
    }
  }
  return v;
}

// The rows 6 + j of the torsion modes j (only the sections act on them: the centreline terms,
// which dominate the other rows by 1e3, would hide an error of the sections' terms there).
std::vector<int> TorsionRows(const SpatialFlexibleBeam& beam) {
  std::vector<int> rows;
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] == SpatialModeKind::kTorsion) {
      rows.push_back(6 + j);
    }
  }
  return rows;
}

// World orientation R(Q) R_x(φ) of the section at quadrature point g.
Eigen::Matrix3d SectionOrientation(const SpatialFlexibleBeam& beam, std::size_t g, const State& q) {
  const double phi = beam.Motion(beam.quadrature_points()[g], q.eta, Eigen::VectorXd()).twist;
  return QuaternionToRotation(q.Q) *
         Eigen::AngleAxisd(phi, Eigen::Vector3d::UnitX()).toRotationMatrix();
}

// The section's angular velocity in its own axes along q ⊕ t v at t = 0: the axial vector of
// R_sᵀ Ṙ_s with Ṙ_s by central differences (step h; truncation O(h²)).
Eigen::Vector3d SectionRate(const SpatialFlexibleBeam& beam, std::size_t g, const State& q,
                            const Eigen::VectorXd& v, double h) {
  const Eigen::Matrix3d W = SectionOrientation(beam, g, q).transpose() *
                            (SectionOrientation(beam, g, q.Advance(v, h)) -
                             SectionOrientation(beam, g, q.Advance(v, -h))) /
                            (2 * h);
  return Eigen::Vector3d(W(2, 1) - W(1, 2), W(0, 2) - W(2, 0), W(1, 0) - W(0, 1)) / 2;
}

// The section inertia J' = ρ diag(I_p, I_xz, I_xy) of quadrature point g (its share of the
// length: weight / A), in section axes.
Eigen::Matrix3d SectionInertiaInSectionAxes(const SpatialFlexibleBeam& beam, std::size_t g) {
  const BeamProperties& p = beam.properties();
  const double per_length = beam.quadrature_weights()[g] / p.area;
  const double i_xz = beam.second_moment_xz();
  return per_length * Eigen::Vector3d(p.second_moment + i_xz, i_xz, p.second_moment).asDiagonal();
}

TEST(SpatialFlexibleTorsion, MassMatrixIsTheKineticEnergyOfThePointsAndTheTwistedSections) {
  // M = ∂²T/∂v², T = ½ Σ_g w_g |ṗ_g|² + ½ Σ_g Ω_gᵀ J'_g Ω_g with ṗ_g = P_g v from differences of
  // the positions and Ω_g = P_Ω,g v (section axes) from differences of the sections'
  // orientations R R_x(φ): an independent evaluation of the sections' kinetic energy (the code
  // uses J(φ) = R_x J' R_xᵀ and Ω = ω + φ̇ e_x). Twists up to 0.4 rad, so that the turn of the
  // non-circular section's inertia (I_xz = 2.25 I_xy) is in M_ωω. h = 1e-5 as for bending: 1e-7
  // of the largest entry.
  for (const bool thick : {false, true}) {
    for (const bool stiffening : {true, false}) {
      const SpatialFlexibleBeam beam = TorsionBeam(stiffening, thick);
      const int nv = 6 + beam.num_modes();
      const State q = TwistedState(beam);
      Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(nv, nv);
      for (std::size_t g = 0; g < beam.quadrature_points().size(); ++g) {
        const Eigen::MatrixXd P = VelocityMatrixByDifferences(beam, g, q, 1e-5);
        Eigen::MatrixXd P_omega(3, nv);
        for (int i = 0; i < nv; ++i) {
          P_omega.col(i) = SectionRate(beam, g, q, Eigen::VectorXd::Unit(nv, i), 1e-5);
        }
        expected += beam.quadrature_weights()[g] * P.transpose() * P +
                    P_omega.transpose() * SectionInertiaInSectionAxes(beam, g) * P_omega;
      }
      const Eigen::MatrixXd M = Mass(beam, q);
      EXPECT_LT((M - expected).cwiseAbs().maxCoeff(), 1e-7 * M.cwiseAbs().maxCoeff())
          << "thick " << thick << ", stiffening " << stiffening;
      // The torsion rows on their own scale (entries ≲ 1: mass-normalized modes).
      const std::vector<int> rows = TorsionRows(beam);
      ASSERT_EQ(rows.size(), 4u);
      EXPECT_LT((M(rows, Eigen::all) - expected(rows, Eigen::all)).cwiseAbs().maxCoeff(), 1e-7)
          << "thick " << thick << ", stiffening " << stiffening;
      // The twist is in it: the sections' y–z product of inertia ∝ sin 2φ (I_xz − I_xy).
      const Eigen::MatrixXd untwisted = Mass(beam, SampleState(beam.num_modes()));
      EXPECT_GT(std::abs(M(4, 5)), 1e-3 * std::abs(M(4, 4)));
      EXPECT_GT((M - untwisted).cwiseAbs().maxCoeff(), 1e-3);
    }
  }
}

TEST(SpatialFlexibleTorsion, QuadraticVelocityVectorIsDAlembertsInertiaForce) {
  // Along q(t) = q ⊕ t v (v constant) the inertial force is −Σ_g w_g P_gᵀ p̈_g (the centreline,
  // as for bending) − Σ_g P_Ω,gᵀ (J'_g Ω̇_g + Ω_g × J'_g Ω_g) (Euler's equations of each section,
  // in section axes), with Ω_g by differences of the orientations (δ = 1e-6) and Ω̇_g by central
  // differences of Ω_g along the path (h = 1e-4: truncation ~1e-8, round-off ~1e-16/(δ h) ~ 1e-6
  // of Ω̇ ~ 1). 1e-5 of the largest entry bounds them.
  for (const bool thick : {false, true}) {
    for (const bool stiffening : {true, false}) {
      const SpatialFlexibleBeam beam = TorsionBeam(stiffening, thick);
      const int nv = 6 + beam.num_modes();
      const State q = TwistedState(beam);
      const Eigen::VectorXd v = TwistingVelocity(beam);
      Eigen::VectorXd expected = CentrelineInertialForceByDifferences(beam, q, v);
      const double h = 1e-4, delta = 1e-6;
      for (std::size_t g = 0; g < beam.quadrature_points().size(); ++g) {
        Eigen::MatrixXd P_omega(3, nv);
        for (int i = 0; i < nv; ++i) {
          P_omega.col(i) = SectionRate(beam, g, q, Eigen::VectorXd::Unit(nv, i), 1e-5);
        }
        const Eigen::Matrix3d J = SectionInertiaInSectionAxes(beam, g);
        const Eigen::Vector3d Omega = SectionRate(beam, g, q, v, delta);
        const Eigen::Vector3d Omega_dot = (SectionRate(beam, g, q.Advance(v, h), v, delta) -
                                           SectionRate(beam, g, q.Advance(v, -h), v, delta)) /
                                          (2 * h);
        expected -= P_omega.transpose() * (J * Omega_dot + Omega.cross(J * Omega));
      }
      const Eigen::VectorXd F = InertialForces(beam, q, v);
      EXPECT_LT((F - expected).cwiseAbs().maxCoeff(), 1e-5 * expected.cwiseAbs().maxCoeff())
          << "thick " << thick << ", stiffening " << stiffening << "\nF " << F.transpose()
          << "\nexpected " << expected.transpose();
      // The torsion rows on their own scale.
      const std::vector<int> rows = TorsionRows(beam);
      const double scale = expected(rows).cwiseAbs().maxCoeff();
      EXPECT_GT(scale, 1e-3);
      EXPECT_LT((F(rows) - expected(rows)).cwiseAbs().maxCoeff(), 1e-5 * scale)
          << "thick " << thick << ", stiffening " << stiffening << "\nF " << F(rows).transpose()
          << "\nexpected " << expected(rows).transpose();
    }
  }
}

TEST(SpatialFlexibleTorsion, QuadraticVelocityForcesDoNoWorkAndPotentialForcesDerive) {
  // As for bending (the same checks and tolerances), with twisted, twisting sections.
  const SpatialFlexibleBeam beam = TorsionBeam();
  ExpectQuadraticVelocityForcesDoNoWork(beam, TwistedState(beam), TwistingVelocity(beam));
  ExpectPotentialForcesDerive(beam, TwistedState(beam));
}

TEST(SpatialFlexibleTorsion, StaticTwistUnderAnEndTorqueIsTheClosedForm) {
  // Clamped shaft, torque T about x at X = L: its virtual work T δφ(L) gives K η = s_φ(L)ᵀ T.
  // With every mode this is the FE solution, and linear shaft elements give the exact nodal
  // twists under nodal torques: φ(X_k) = T X_k/(G J) (to round-off: 1e-9), and no displacement
  // of the centreline.
  BeamProperties p = KaneBeam(8, 48);
  const BeamTorsion torsion = TestTorsion();
  const SpatialFlexibleBeam beam(p, kSecondMomentXZ, torsion);
  const double T = 150.0, gj = torsion.shear_modulus * torsion.torsion_constant;
  const SpatialBeamPoint tip = beam.PointAt(p.length);
  const Eigen::VectorXd eta =
      (T * tip.twist.transpose()).cwiseQuotient(beam.frequencies().cwiseAbs2());
  for (int k = 0; k <= p.elements; ++k) {
    const double X = beam.NodeX(k), closed = T * X / gj;
    const SpatialBeamMotion at = beam.Motion(beam.PointAt(X), eta, Eigen::VectorXd());
    EXPECT_NEAR(at.twist, closed, 1e-9 * T * p.length / gj) << "node " << k;
    EXPECT_NEAR((at.u - Eigen::Vector3d(X, 0, 0)).norm(), 0.0, 1e-12) << "node " << k;
  }
  EXPECT_GT(T * p.length / gj, 0.1);  // a twist of 0.11 rad: not a vanishing check
}

TEST(SpatialFlexibleTorsion, ShaftFrequenciesConvergeAtOrderTwoToTheClosedForm) {
  // Clamped–free shaft: ω_k = (2k − 1) π/(2L) √(G J/(ρ I_p)) (Blevins, Formulas for Natural
  // Frequency and Mode Shape, Table 8-16, torsion of a fixed–free shaft); free–free:
  // k π/L √(G J/(ρ I_p)). The FE model's frequencies are the discrete dispersion relation of
  // linear elements with consistent mass on the sines (cosines) of the continuum modes,
  //   ω² = (6 c²/l²) (1 − cos κl)/(2 + cos κl),  c² = G J/(ρ I_p),
  // to round-off (1e-10), so they lie above the continuum by (κl)²/24 to leading order: the
  // error falls at order 2 in the element size (observed order within 0.02 of 2 for the first
  // three modes, n = 8 → 16 → 32 → 64).
  const BeamTorsion torsion = TestTorsion();
  for (const BeamReference reference : {BeamReference::kClamped, BeamReference::kFree}) {
    std::vector<double> previous;
    for (const int n : {8, 16, 32, 64}) {
      BeamProperties p = KaneBeam(n, 1, reference);
      const SpatialFlexibleBeam beam(p, kSecondMomentXZ, torsion, "shaft");
      const Eigen::VectorXd& w = beam.TorsionFeFrequencies();
      ASSERT_EQ(w.size(), n);
      const double c = std::sqrt(torsion.shear_modulus * torsion.torsion_constant /
                                 (p.density * (p.second_moment + kSecondMomentXZ)));
      const double l = p.length / n;
      std::vector<double> errors;
      for (int k = 1; k <= 3; ++k) {
        const double kappa = (reference == BeamReference::kClamped ? 2 * k - 1 : 2 * k) *
                             std::numbers::pi / (2 * p.length);
        const double discrete =
            std::sqrt(6 * c * c / (l * l) * (1 - std::cos(kappa * l)) / (2 + std::cos(kappa * l)));
        EXPECT_NEAR(w(k - 1), discrete, 1e-10 * discrete) << n << " elements, mode " << k;
        errors.push_back(w(k - 1) / (c * kappa) - 1.0);
        EXPECT_GT(errors.back(), 0.0);  // consistent mass: from above
      }
      if (!previous.empty()) {
        for (int k = 0; k < 3; ++k) {
          const double order = std::log2(previous[static_cast<std::size_t>(k)] /
                                         errors[static_cast<std::size_t>(k)]);
          EXPECT_NEAR(order, 2.0, 0.02) << n << " elements, mode " << k + 1;
        }
      }
      previous = errors;
    }
  }
}

TEST(SpatialFlexibleTorsion, KeptTorsionModesAreTheShaftModes) {
  // The m lowest of the 6n modes: each torsion mode kept has an FE torsion frequency, is
  // mass-normalized (∫ ρ I_p s_φ² = 1: its diagonal of M_ηη, 1e-12), moves no centreline point,
  // and with the clamped reference leaves the section at X = 0 untwisted.
  const SpatialFlexibleBeam beam = TorsionBeam();
  int torsion_modes = 0;
  const Eigen::MatrixXd M = Mass(beam, SampleState(beam.num_modes()));
  for (int j = 0; j < beam.num_modes(); ++j) {
    if (beam.mode_kinds()[static_cast<std::size_t>(j)] != SpatialModeKind::kTorsion) continue;
    EXPECT_NEAR(beam.frequencies()(j), beam.TorsionFeFrequencies()(torsion_modes), 1e-12)
        << "mode " << j;
    ++torsion_modes;
    EXPECT_NEAR(M(6 + j, 6 + j), 1.0, 1e-12) << "mode " << j;
    EXPECT_EQ(beam.PointAt(0.0).twist(j), 0.0);
    const SpatialBeamPoint mid = beam.PointAt(3.3);
    EXPECT_EQ(mid.su(j), 0.0);
    EXPECT_EQ(mid.sv(j), 0.0);
    EXPECT_EQ(mid.sw(j), 0.0);
  }
  EXPECT_EQ(torsion_modes, 4);
}

TEST(SpatialFlexibleTorsion, WithoutTorsionModesTheBeamIsTheUntwistedOne) {
  // G so stiff that no torsion mode is among the m = 8 lowest: M and F equal those of the beam
  // without torsion to round-off (1e-12: the sections' inertia is then summed over the
  // quadrature points instead of taken as ρ L diag(I_p, I_xz, I_xy)).
  BeamProperties p = KaneBeam(4, 8);
  const BeamTorsion stiff{1e3 * p.youngs_modulus, p.second_moment + kSecondMomentXZ};
  const SpatialFlexibleBeam twisting(p, kSecondMomentXZ, stiff), plain(p, kSecondMomentXZ);
  for (const SpatialModeKind kind : twisting.mode_kinds()) {
    ASSERT_NE(kind, SpatialModeKind::kTorsion);
  }
  const State q = SampleState(8);
  const Eigen::VectorXd v = SampleVelocity(8);
  const Eigen::MatrixXd M_t = Mass(twisting, q), M_p = Mass(plain, q);
  EXPECT_LT((M_t - M_p).cwiseAbs().maxCoeff(), 1e-12 * M_p.cwiseAbs().maxCoeff());
  Eigen::VectorXd F_t = Eigen::VectorXd::Zero(14), F_p = F_t;
  const Eigen::Matrix3d R = QuaternionToRotation(q.Q);
  const Eigen::Vector3d g(0, 0, -9.81);
  twisting.AddForces(R, q.eta, v.segment<3>(3), v.tail(8), g, F_t);
  plain.AddForces(R, q.eta, v.segment<3>(3), v.tail(8), g, F_p);
  EXPECT_LT((F_t - F_p).cwiseAbs().maxCoeff(), 1e-12 * F_p.cwiseAbs().maxCoeff());
}

TEST(SpatialFlexibleTorsion, InputIsValidated) {
  // G, J > 0; modes up to 6n with torsion (5n without); the rectangle's torsion constant against
  // Timoshenko & Goodier's table (§109: k₁ = 0.141, 0.196, 0.229, 0.263, 0.281, 0.291, 0.312 for
  // a/b = 1, 1.5, 2, 3, 4, 5, 10, J = k₁ a b³, given to 3 digits) and its thin limit a b³/3.
  BeamProperties p = KaneBeam(4, 24);
  EXPECT_NO_THROW(SpatialFlexibleBeam(p, kSecondMomentXZ, TestTorsion(), "beam b"));
  p.modes = 25;
  try {
    SpatialFlexibleBeam(p, kSecondMomentXZ, TestTorsion(), "beam b");
    ADD_FAILURE() << "25 modes of 4 elements accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("[1, 24]"), std::string::npos) << e.what();
  }
  p.modes = 4;
  for (const BeamTorsion bad : {BeamTorsion{0.0, 1e-7}, BeamTorsion{-1.0, 1e-7},
                                BeamTorsion{2e10, 0.0}, BeamTorsion{2e10, std::nan("")}}) {
    try {
      SpatialFlexibleBeam(p, kSecondMomentXZ, bad, "beam b");
      ADD_FAILURE() << "G " << bad.shear_modulus << ", J " << bad.torsion_constant << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("beam b"), std::string::npos) << e.what();
      const std::string field = bad.shear_modulus > 0 ? "torsion_constant" : "shear_modulus";
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  const double ratio[7] = {1, 1.5, 2, 3, 4, 5, 10};
  const double k1[7] = {0.141, 0.196, 0.229, 0.263, 0.281, 0.291, 0.312};
  for (int i = 0; i < 7; ++i) {
    EXPECT_NEAR(RectangleTorsionConstant(ratio[i], 1.0) / ratio[i], k1[i], 0.0006) << ratio[i];
    EXPECT_EQ(RectangleTorsionConstant(1.0, ratio[i]), RectangleTorsionConstant(ratio[i], 1.0));
  }
  EXPECT_NEAR(RectangleTorsionConstant(1000.0, 1.0) / (1000.0 / 3.0), 1.0, 1e-3);
}

// ---- Craig–Bampton (engine/flexible_beam_spatial.h, "Craig–Bampton reduction") -------------

// The clamped Kane beam of n elements with torsion, Craig–Bampton on `boundary` with m modes.
SpatialFlexibleBeam CraigBamptonBeam(int elements, int modes, std::vector<int> boundary,
                                     BeamReference reference = BeamReference::kClamped,
                                     bool torsion = true) {
  BeamProperties p = KaneBeam(elements, modes, reference);
  p.reduction = BeamReduction::kCraigBampton;
  p.boundary_nodes = std::move(boundary);
  return torsion ? SpatialFlexibleBeam(p, kSecondMomentXZ, TestTorsion())
                 : SpatialFlexibleBeam(p, kSecondMomentXZ);
}

TEST(SpatialCraigBampton, TipNodeConstraintModesGiveTheExactStaticDeflections) {
  // Clamped cantilever (8 elements, torsion), the tip node as boundary and no fixed-interface
  // mode: 6 coordinates (u, v, θ_z, w, θ_y, φ at X = L). A tip load f or torque T at η = 0 gives
  // K η = B(L)ᵀ f or s_φ(L)ᵀ T; the constraint modes hold the FE static solution of a load at the
  // boundary node, which linear and Hermite elements make exact at the nodes: F L/(EA),
  // F L³/(3 E I) in each plane and T L/(G J) to round-off (1e-9 relative; measured ≤ 2.9e-13).
  // The 6 lowest free-interface modes (bending only, 3 per plane) miss the bending tip
  // deflections by 0.14 % and cannot stretch or twist at all.
  const SpatialFlexibleBeam cb = CraigBamptonBeam(8, 6, {8});
  ASSERT_EQ(cb.num_modes(), 6);
  const BeamProperties& p = cb.properties();
  const BeamTorsion torsion = TestTorsion();
  const double L = p.length, E = p.youngs_modulus, load = 10.0;
  const Eigen::Vector4d closed(load * L / (E * p.area),
                               load * std::pow(L, 3) / (3 * E * p.second_moment),
                               load * std::pow(L, 3) / (3 * E * kSecondMomentXZ),
                               load * L / (torsion.shear_modulus * torsion.torsion_constant));
  BeamProperties free_p = p;
  free_p.reduction = BeamReduction::kFreeInterface;
  free_p.boundary_nodes.clear();
  const SpatialFlexibleBeam fi(free_p, kSecondMomentXZ, torsion);
  const auto tip_response = [&](const SpatialFlexibleBeam& beam, int axis) {
    const SpatialBeamPoint tip = beam.PointAt(L);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(beam.num_modes());
    const Eigen::MatrixXd B = beam.Motion(tip, zero, Eigen::VectorXd()).B;
    const Eigen::VectorXd generalized = axis < 3 ? Eigen::VectorXd(B.transpose().col(axis) * load)
                                                 : Eigen::VectorXd(tip.twist.transpose() * load);
    const Eigen::VectorXd eta = generalized.cwiseQuotient(beam.frequencies().cwiseAbs2());
    const Eigen::Vector3d d = B * eta;
    return Eigen::Vector4d(d.x(), d.y(), d.z(), tip.twist.dot(eta));
  };
  for (int axis = 0; axis < 4; ++axis) {
    const Eigen::Vector4d d = tip_response(cb, axis);
    EXPECT_NEAR(d(axis), closed(axis), 1e-9 * closed(axis)) << "load " << axis;
    for (int other = 0; other < 4; ++other) {
      if (other != axis) {
        EXPECT_NEAR(d(other), 0.0, 1e-9 * closed(axis)) << axis << other;
      }
    }
    const double miss = std::abs(tip_response(fi, axis)(axis) / closed(axis) - 1.0);
    std::cout << "load " << axis << ": Craig-Bampton error " << d(axis) / closed(axis) - 1.0
              << ", 6 free-interface modes miss " << miss << "\n";
    if (axis == 1 || axis == 2) {
      EXPECT_GT(miss, 1e-3) << "free-interface, load " << axis;
    } else {
      EXPECT_EQ(miss, 1.0);  // no axial or torsion mode among the 6 lowest
    }
  }
}

TEST(SpatialCraigBampton, FrequenciesAreRitzBoundsAndEveryModeGivesTheFullModel) {
  // The projected eigenvalues of a subspace bound the FE ones from above, mode by mode (Poincaré's
  // separation theorem; the FE frequencies are those of the free-interface beam with every mode).
  // With every mode the subspace is the whole space and the frequencies are the FE ones (1e-9
  // relative). Free reference, boundary node 0 (6 constraint coordinates, the 6 rigid motions
  // dropped), and a pinned beam on its two end nodes. Measured below: the first three modes of
  // the pinned beam with k = 6 fixed-interface modes.
  for (const BeamReference reference : {BeamReference::kFree, BeamReference::kPinned}) {
    const std::vector<int> boundary =
        reference == BeamReference::kFree ? std::vector<int>{0} : std::vector<int>{0, 4};
    BeamProperties p = KaneBeam(4, 24, reference);
    const SpatialFlexibleBeam full(p, kSecondMomentXZ, TestTorsion());
    const SpatialFlexibleBeam all = CraigBamptonBeam(4, 24, boundary, reference);
    EXPECT_LT(((all.frequencies() - full.frequencies()).array() / full.frequencies().array())
                  .abs()
                  .maxCoeff(),
              1e-9);
    const int fewest = SpatialMinimumModes(all.properties(), true);
    for (const int m : {fewest, fewest + 3, fewest + 6}) {
      const SpatialFlexibleBeam cb = CraigBamptonBeam(4, m, boundary, reference);
      std::cout << (reference == BeamReference::kFree ? "free" : "pinned") << ", m " << m
                << ": relative error of the 3 lowest "
                << ((cb.frequencies().head(std::min(m, 3)) -
                     full.frequencies().head(std::min(m, 3)))
                        .array() /
                    full.frequencies().head(std::min(m, 3)).array())
                       .transpose()
                << "\n";
      for (int j = 0; j < m; ++j) {
        EXPECT_GE(cb.frequencies()(j), full.frequencies()(j) * (1.0 - 1e-12))
            << "m " << m << " mode " << j;
      }
    }
  }
}

TEST(SpatialCraigBampton, MassMatrixAndForcesMatchDifferences) {
  // The checks of the free-interface beam on a Craig–Bampton one (pinned on nodes 0 and 4, every
  // family mixed by the constraint modes; no torsion, as those checks assume): M against the
  // points' kinetic energy, the quadratic velocity vector against d'Alembert, the power identity
  // and the potential forces (tolerances above).
  const SpatialFlexibleBeam beam =
      CraigBamptonBeam(4, 12, {0, 4}, BeamReference::kPinned, /*torsion=*/false);
  ExpectMassMatrixIsTheKineticEnergyOfThePoints(beam);
  ExpectQuadraticVelocityVectorIsDAlembertsInertiaForce(beam);
  ExpectQuadraticVelocityForcesDoNoWork(beam, SampleState(beam.num_modes()),
                                        SampleVelocity(beam.num_modes()));
  ExpectPotentialForcesDerive(beam, SampleState(beam.num_modes()));
}

}  // namespace
}  // namespace saltus::engine
