// Small planar models shared by the engine tests: a pendulum with a closed form and a
// slider-crank (closed loop).
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "engine/planar_model.h"

namespace saltus::engine::testing {

// A body with these mass properties (at the origin, at rest).
inline PlanarBody Body(const std::string& name, double mass, double inertia) {
  PlanarBody body;
  body.name = name;
  body.mass = mass;
  body.inertia = inertia;
  return body;
}

// A joint of this type between bodies a and b at these body-frame points.
inline PlanarJoint Joint(const std::string& name, PlanarJointType type, int a, int b,
                         Eigen::Vector2d point_a, Eigen::Vector2d point_b) {
  PlanarJoint joint;
  joint.name = name;
  joint.type = type;
  joint.body_a = a;
  joint.body_b = b;
  joint.point_a = point_a;
  joint.point_b = point_b;
  return joint;
}

// Pendulum: one body (mass m, inertia J about its centre of mass), pivot on the ground at the
// origin, centre of mass at distance ℓ from the pivot. The pivot is the body point (0, ℓ), so
//   r(θ) = (ℓ sin θ, −ℓ cos θ),   (J + m ℓ²) θ̈ = −m g ℓ sin θ   (gravity (0, −g)).
// `joint_copies` revolute joints are added (2 makes the rows redundant).
struct PendulumParams {
  double m = 2.0;
  double J = 0.3;
  double ell = 0.7;
  double g = 9.81;
  double theta = 0.6;
  double omega = -1.3;
  int joint_copies = 1;
};

inline std::shared_ptr<const PlanarModel> MakePendulum(const PendulumParams& p) {
  PlanarModelBuilder builder;
  PlanarBody body;
  body.name = "bob";
  body.mass = p.m;
  body.inertia = p.J;
  body.q0 << p.ell * std::sin(p.theta), -p.ell * std::cos(p.theta), p.theta;
  body.v0 << p.ell * p.omega * std::cos(p.theta), p.ell * p.omega * std::sin(p.theta), p.omega;
  const int bob = builder.AddBody(body);
  for (int k = 0; k < p.joint_copies; ++k) {
    PlanarJoint pin;
    pin.name = "pin" + std::to_string(k);
    pin.type = PlanarJointType::kRevolute;
    pin.body_a = kGround;
    pin.body_b = bob;
    pin.point_a = Eigen::Vector2d::Zero();
    pin.point_b = Eigen::Vector2d(0.0, p.ell);
    builder.AddJoint(pin);
  }
  builder.SetGravity(Eigen::Vector2d(0.0, -p.g));
  return builder.Build();
}

// Slider-crank: crank (length a) pinned to the ground at the origin, rod (length b) pinned to
// the crank tip and to a slider that moves along the ground x axis (prismatic joint). Each
// link's centre of mass is its midpoint, its body x axis along the link. 9 coordinates, 8 joint
// rows (3 revolute + 1 prismatic), one degree of freedom; φ is the crank angle.
struct SliderCrankParams {
  double a = 0.5;
  double b = 1.5;
  double phi = 0.8;
  double phi_dot = 2.0;
};

inline std::shared_ptr<const PlanarModel> MakeSliderCrank(const SliderCrankParams& p) {
  const double a = p.a;
  const double b = p.b;
  const double phi = p.phi;
  const double c = std::sqrt(b * b - a * a * std::sin(phi) * std::sin(phi));
  const double x_slider = a * std::cos(phi) + c;
  const double psi = std::atan2(-a * std::sin(phi), c);
  // Velocities: tip A = a(cos φ, sin φ); B = (x_B, 0); ψ from a sin φ + b sin ψ = 0.
  const double psi_dot = -a * std::cos(phi) * p.phi_dot / (b * std::cos(psi));
  const double x_slider_dot = -a * std::sin(phi) * p.phi_dot - b * std::sin(psi) * psi_dot;
  const Eigen::Vector2d tip(a * std::cos(phi), a * std::sin(phi));
  const Eigen::Vector2d tip_dot(-a * std::sin(phi) * p.phi_dot, a * std::cos(phi) * p.phi_dot);

  PlanarModelBuilder builder;
  PlanarBody crank;
  crank.name = "crank";
  crank.mass = 1.0;
  crank.inertia = a * a / 12.0;
  crank.q0 << 0.5 * tip, phi;
  crank.v0 << 0.5 * tip_dot, p.phi_dot;
  PlanarBody rod;
  rod.name = "rod";
  rod.mass = 2.0;
  rod.inertia = 2.0 * b * b / 12.0;
  rod.q0 << 0.5 * (tip.x() + x_slider), 0.5 * tip.y(), psi;
  rod.v0 << 0.5 * (tip_dot.x() + x_slider_dot), 0.5 * tip_dot.y(), psi_dot;
  PlanarBody slider;
  slider.name = "slider";
  slider.mass = 0.5;
  slider.inertia = 0.01;
  slider.q0 << x_slider, 0.0, 0.0;
  slider.v0 << x_slider_dot, 0.0, 0.0;
  const int i_crank = builder.AddBody(crank);
  const int i_rod = builder.AddBody(rod);
  const int i_slider = builder.AddBody(slider);

  PlanarJoint j;
  j.type = PlanarJointType::kRevolute;
  j.name = "ground_crank";
  j.body_a = kGround;
  j.body_b = i_crank;
  j.point_a = Eigen::Vector2d::Zero();
  j.point_b = Eigen::Vector2d(-0.5 * a, 0.0);
  builder.AddJoint(j);
  j.name = "crank_rod";
  j.body_a = i_crank;
  j.body_b = i_rod;
  j.point_a = Eigen::Vector2d(0.5 * a, 0.0);
  j.point_b = Eigen::Vector2d(-0.5 * b, 0.0);
  builder.AddJoint(j);
  j.name = "rod_slider";
  j.body_a = i_rod;
  j.body_b = i_slider;
  j.point_a = Eigen::Vector2d(0.5 * b, 0.0);
  j.point_b = Eigen::Vector2d::Zero();
  builder.AddJoint(j);
  j.name = "slide";
  j.type = PlanarJointType::kPrismatic;
  j.body_a = kGround;
  j.body_b = i_slider;
  j.point_a = Eigen::Vector2d::Zero();
  j.point_b = Eigen::Vector2d::Zero();
  j.axis_a = Eigen::Vector2d::UnitX();
  builder.AddJoint(j);
  builder.SetGravity(Eigen::Vector2d(0.0, -9.81));
  return builder.Build();
}

// G by central differences of g of step h, column by column (q̇ = v: planar systems).
inline Eigen::MatrixXd JacobianByDifference(const MechanicalSystem& system, double t,
                                            const Eigen::VectorXd& q, const std::vector<int>& rows,
                                            double h) {
  Eigen::MatrixXd G(static_cast<Eigen::Index>(rows.size()), system.nq());
  for (int j = 0; j < system.nq(); ++j) {
    Eigen::VectorXd qp = q, qm = q, gp, gm;
    qp(j) += h;
    qm(j) -= h;
    system.ConstraintValues(t, qp, rows, &gp);
    system.ConstraintValues(t, qm, rows, &gm);
    G.col(j) = (gp - gm) / (2.0 * h);
  }
  return G;
}

// γ by a central difference of step h: d/ds [G(q + s v, t + s) v + ∂g/∂t(q + s v, t + s)] at
// s = 0, i.e. g̈ with v̇ = 0 including the time terms of rheonomic rows (q̇ = v: planar systems).
inline Eigen::VectorXd GammaByDifference(const MechanicalSystem& system, double t,
                                         const Eigen::VectorXd& q, const Eigen::VectorXd& v,
                                         const std::vector<int>& rows, double h) {
  auto gdot = [&](double s) {
    Eigen::MatrixXd G;
    Eigen::VectorXd g_t;
    system.ConstraintJacobian(t + s, q + s * v, rows, &G);
    system.ConstraintTimeDerivative(t + s, q + s * v, rows, &g_t);
    return Eigen::VectorXd(G * v + g_t);
  };
  return (gdot(h) - gdot(-h)) / (2.0 * h);
}

// All rows of a system, ascending.
inline std::vector<int> AllRows(const MechanicalSystem& system) {
  std::vector<int> rows(static_cast<std::size_t>(system.num_constraints()));
  for (int i = 0; i < system.num_constraints(); ++i) rows[static_cast<std::size_t>(i)] = i;
  return rows;
}

}  // namespace saltus::engine::testing
