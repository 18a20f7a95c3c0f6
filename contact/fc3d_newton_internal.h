// The per-contact pieces of contact/fc3d_newton.cc, exposed for their finite-difference test
// (tests/contact/fc3d_newton_test.cc); not part of the library's interface.
#pragma once

#include <Eigen/Dense>

namespace saltus::contact::fc3d_internal {

// The Alart–Curnier function Φ(r, u) of one contact (contact/fc3d_newton.h, with ρ_N, ρ_T > 0 and
// unknowns normal, tangent 1, tangent 2) and one element (A, B) of its generalized Jacobian,
// dΦ = A dr + B du. Where Φ is differentiable (x_N ≠ 0, ‖x_T‖ ≠ R, x_T ≠ 0) (A, B) is its
// Jacobian; on a kink it is the one-sided Jacobian of the branch the comparisons below select
// (x_N > 0 pressed, ‖x_T‖ ≤ R stick), one of the limits that make up Clarke's generalized Jacobian.
struct AcBlock {
  Eigen::Vector3d phi;
  Eigen::Matrix3d A, B;
};
AcBlock AlartCurnier(const Eigen::Vector3d& r, const Eigen::Vector3d& u, double mu, double rho_n,
                     double rho_t);

// The smoothed function Φ_ε of contact/fc3d_newton.h ("Smoothing") and its Jacobian (A, B), for
// ε > 0: C^1 in (r, u), so (A, B) is its derivative everywhere, kinks included.
AcBlock SmoothedAlartCurnier(const Eigen::Vector3d& r, const Eigen::Vector3d& u, double mu,
                             double rho_n, double rho_t, double eps);

}  // namespace saltus::contact::fc3d_internal
