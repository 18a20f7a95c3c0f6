// Random states of testing::TwoFreeBodies and the Richardson reference of γ, shared by the tests
// of the tangential rows (spatial_tangents_test) and the resistance rows
// (spatial_resistance_test) of contact::SpatialContacts.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "engine/mechanical_system.h"

namespace saltus::contact::testing {

// Body 0 within 5 cm of the origin and tilted by ≲ 0.3 rad (it carries the pyramid, box A and
// the moving planes), body 1 over |x|, |y| ≤ 0.35 m at height 0.1 ± 0.15 m in any orientation;
// velocities in [−2, 2]. Over the draws the corners, vertices and centres of body 1's shapes
// land in face, edge and vertex regions of the box and of the pyramid.
inline void RandomTwoBodyState(std::mt19937& rng, Eigen::VectorXd* q, Eigen::VectorXd* v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  q->resize(14);
  q->segment<3>(0) = 0.05 * Eigen::Vector3d(u(rng), u(rng), u(rng));
  q->segment<4>(3) =
      Eigen::Vector4d(1.0 + 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng), 0.3 * u(rng)).normalized();
  q->segment<3>(7) = Eigen::Vector3d(0.35 * u(rng), 0.35 * u(rng), 0.1 + 0.15 * u(rng));
  q->segment<4>(10) = Eigen::Vector4d(u(rng), u(rng), u(rng), u(rng)).normalized();
  v->resize(12);
  for (int k = 0; k < 12; ++k) (*v)[k] = 2.0 * u(rng);
}

// γ of `rows` at (q, v) and its reference d/dε [G(q ⊕ ε v) v] at ε = 0: central differences
// D(h) at h = ε, ε/2, ε/4, Richardson-extrapolated R1 = (4 D(ε/2) − D(ε))/3 and R2 =
// (4 D(ε/4) − D(ε/2))/3. Both err by O(h⁴), so R1 − R2 ≈ 15 err(R2): Estimate() estimates the
// reference's truncation error. Tolerance(k, difference_gamma): 1e-8 (1 + |γ|) + 10 estimates
// (round-off of D(ε/4): machine ε |G v| / 1e-5 ≈ 1e-10 for |G v| ≲ 10, ×5/3 by the
// extrapolation), plus for a row whose γ is itself a central difference (step ε_D =
// ∛(machine ε)/max(1, ‖v‖∞)) its truncation ≈ (ε_D/(ε/4))² |D(ε/4) − R2|, times 10.
struct GammaReference {
  Eigen::VectorXd gamma, r1, r2, d4;
  double eps = 0.0, eps_d = 0.0;

  GammaReference(const engine::MechanicalSystem& system, const Eigen::VectorXd& q,
                 const Eigen::VectorXd& v, const std::vector<int>& rows, double eps_in)
      : eps(eps_in) {
    system.ConstraintGamma(0, q, v, rows, &gamma);
    const auto difference = [&](double h) {
      Eigen::VectorXd qp, qm;
      system.IntegratePosition(q, v, h, &qp);
      system.IntegratePosition(q, v, -h, &qm);
      Eigen::MatrixXd Gp, Gm;
      system.ConstraintJacobian(0, qp, rows, &Gp);
      system.ConstraintJacobian(0, qm, rows, &Gm);
      return Eigen::VectorXd((Gp - Gm) * v / (2 * h));
    };
    const Eigen::VectorXd d1 = difference(eps), d2 = difference(eps / 2);
    d4 = difference(eps / 4);
    r1 = (4 * d2 - d1) / 3;
    r2 = (4 * d4 - d2) / 3;
    eps_d = std::cbrt(std::numeric_limits<double>::epsilon()) /
            std::max(1.0, v.lpNorm<Eigen::Infinity>());
  }
  double Estimate(Eigen::Index k) const { return std::abs(r1[k] - r2[k]) / 15; }
  double Error(Eigen::Index k) const { return std::abs(r2[k] - gamma[k]); }
  double Tolerance(Eigen::Index k, bool difference_gamma) const {
    return 1e-8 * (1 + std::abs(gamma[k])) + 10 * Estimate(k) +
           (difference_gamma ? 10 * std::pow(eps_d / (eps / 4), 2) * std::abs(d4[k] - r2[k]) : 0.0);
  }
};

}  // namespace saltus::contact::testing
