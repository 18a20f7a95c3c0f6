// The woodpecker toy in the linearized model of Leine, Glocker & van Campen (Nonlinear Dynamics
// 31 (2003) 211–231), written as Siconos writes it in its example Mechanics/Woodpecker
// (LagrangianLinearTIDS with constant M and K, LagrangianLinearTIR contacts), as a Saltus
// mechanical system. Shared by tests/events/woodpecker_reference_test.cc and
// bench/woodpecker_saltus.cc (the side-by-side run against bench/woodpecker_siconos.cc).
//
// Coordinates q = (y, φ_M, φ_S): the sleeve's height and the sleeve's and the bird's angles.
//   M = [m_M + m_S, m_S l_M, m_S l_G; m_S l_M, J_M + m_S l_M², m_S l_M l_G;
//        m_S l_G, m_S l_M l_G, J_S + m_S l_G²],
//   F = −g (m_M + m_S, m_S l_M, m_S l_G) − K q,  K = c_φ [0 0 0; 0 1 −1; 0 −1 1].
// Contacts (gap g_N and tangential velocity ġ_T, linear in q and v), rows in this order:
//   beak    g_N = l_M + l_G − l_S − r_O − h_S φ_S,  ġ_T = ẏ + l_M φ̇_M + (l_G − l_S) φ̇_S,  e = 0.5
//   corner  g_N = r_M − r_O + h_M φ_M,              ġ_T = ẏ + r_M φ̇_M,                      e = 0
//   corner  g_N = r_M − r_O − h_M φ_M,              ġ_T = ẏ + r_M φ̇_M,                      e = 0
// all with μ = 0.3 (parameters: ../shared/FRICTION.md, "Woodpecker toy"; Siconos'
// WoodPeckerConsts.h). Rows 0–2 are the normal gaps, rows 3–5 their tangential rows.
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>

#include "engine/lagrangian_system.h"

namespace saltus::test_support::woodpecker {

// Geometry (m), inertias (kg, kg m²), spring (N m/rad), gravity (m/s²), friction.
inline constexpr double r_O = 0.0025, r_M = 0.0031, h_M = 0.0058, l_M = 0.010, l_G = 0.015,
                        h_S = 0.02, l_S = 0.0201;
inline constexpr double m_M = 0.0003, m_S = 0.0045, J_M = 5.0e-9, J_S = 7.0e-7, c_phi = 0.0056,
                        g = 9.81, mu = 0.3;

// The published initial state (q, v) = ((0, −0.1036, −0.2788), (−0.3411, 0, −7.4583)) puts the
// lower corner 8.8e-7 m inside the pole; kContactAngle = −(r_M − r_O)/h_M = −0.103448 closes it
// exactly and is the event loop's start.
inline constexpr double kPublishedPhiM = -0.1036;
inline constexpr double kContactAngle = -(r_M - r_O) / h_M;
inline Eigen::Vector3d InitialPositions(double phi_M) { return {0.0, phi_M, -0.2788}; }
inline Eigen::Vector3d InitialVelocities() { return {-0.3411, 0.0, -7.4583}; }

inline std::shared_ptr<engine::MechanicalSystem> LinearWoodpecker() {
  using Eigen::MatrixXd;
  using Eigen::VectorXd;
  engine::LagrangianCallbacks cb;
  cb.n = 3;
  cb.constant_mass = true;
  cb.mass = [](const VectorXd&, MatrixXd* M) {
    M->resize(3, 3);
    *M << m_S + m_M, m_S * l_M, m_S * l_G,                  //
        m_S * l_M, J_M + m_S * l_M * l_M, m_S * l_M * l_G,  //
        m_S * l_G, m_S * l_M * l_G, J_S + m_S * l_G * l_G;
  };
  cb.forces = [](double, const VectorXd& q, const VectorXd&, VectorXd* F) {
    const double spring = c_phi * (q[1] - q[2]);
    *F = VectorXd(3);
    *F << -(m_M + m_S) * g, -m_S * l_M * g - spring, -m_S * l_G * g + spring;
  };
  auto sys = std::make_shared<engine::LagrangianSystem>(cb);

  MatrixXd G(6, 3);
  G << 0, 0, -h_S,        //
      0, h_M, 0,          //
      0, -h_M, 0,         //
      1, l_M, l_G - l_S,  //
      1, r_M, 0,          //
      1, r_M, 0;
  VectorXd b(6);
  b << l_M + l_G - l_S - r_O, r_M - r_O, r_M - r_O, 0, 0, 0;
  engine::ConstraintCallbacks cc;
  const char* names[] = {"beak", "corner_up", "corner_down"};
  for (int k = 0; k < 3; ++k) {
    engine::ConstraintRowInfo n{engine::ConstraintKind::kUnilateral, names[k]};
    n.friction = mu;
    n.restitution = k == 0 ? 0.5 : 0.0;
    cc.rows.push_back(n);
  }
  for (int k = 0; k < 3; ++k) {
    engine::ConstraintRowInfo t{engine::ConstraintKind::kTangential, std::string(names[k]) + ".t"};
    t.level = engine::ConstraintLevel::kVelocity;
    t.normal_row = k;
    cc.rows.push_back(t);
  }
  cc.values = [G, b](double, const VectorXd& q, VectorXd* gq) {
    *gq = G * q + b;
    gq->tail(3).setZero();  // velocity-level rows (engine/constraint_block.h)
  };
  cc.jacobian = [G](double, const VectorXd&, MatrixXd* Gq) { *Gq = G; };
  sys->AddConstraintBlock(std::make_shared<engine::CallbackConstraints>(cc, 3));
  return sys;
}

}  // namespace saltus::test_support::woodpecker
