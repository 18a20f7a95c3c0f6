// Dormand–Prince 5(4) on the index-1 formulation, with MDOP5-style projection (MDOP5: Simeon 1995).
//
// The step, the error control, the projection, the treatment of singular configurations and the
// failures are those of every embedded pair here (explicit_runge_kutta.h). DOPRI5's tableau (c,
// a, b, b̂) is below: 7 stages, FSAL (a_7j = b_j), so an accepted step costs 6 KKT solves; one
// estimator y_{n+1} − ŷ_{n+1} with b̂ of order 4, so the step-size exponent is 1/5.
//
// Dense output (Hairer, Nørsett & Wanner, Sec. II.6, the continuous extension of order 4 used by
// their code DOPRI5; no extra stage): with θ = (s − t_n)/h ∈ [0, 1] and, for each component of
// the tangent increment and of v,
//   r₁ = h Σ b_j k_j,  r₂ = h k_1 − r₁,  r₃ = r₁ − h k_7 − r₂,  r₄ = h Σ d_j k_j,
//   y(θ) = y_n + θ (r₁ + (1 − θ)(r₂ + θ (r₃ + (1 − θ) r₄))),
// with k = K for positions (then q(s) = q_n ⊕ Δ(θ), Δ the tangent increment) and k = A for
// velocities. The interpolant reproduces y_n at θ = 0 and the unprojected y_{n+1} at θ = 1.
//
// References: J. R. Dormand, P. J. Prince, A family of embedded Runge–Kutta formulae, J. Comput.
// Appl. Math. 6 (1980) 19–26. E. Hairer, S. P. Nørsett, G. Wanner, Solving Ordinary Differential
// Equations I, 2nd ed., Springer 1993, Sec. II.5 (Table 5.2), II.6 (dense output).
#pragma once

#include <Eigen/Dense>
#include <array>
#include <string_view>

#include "integrators/explicit_runge_kutta.h"

namespace saltus::integrators {

// The Dormand–Prince 5(4) tableau (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Solving
// ODEs I, Table II.5.2) and the dense-output weights d of their DOPRI5 (ibid., Sec. II.6).
// Indices are 0-based: stage i = 0..6.
namespace dopri5_tableau {

inline constexpr int kStages = 7;

inline constexpr std::array<double, kStages> kC = {0.0,       1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0,
                                                   8.0 / 9.0, 1.0,       1.0};

// a[i][j], j < i (strictly lower triangular).
inline constexpr std::array<std::array<double, kStages>, kStages> kA = {{
    {0, 0, 0, 0, 0, 0, 0},
    {1.0 / 5.0, 0, 0, 0, 0, 0, 0},
    {3.0 / 40.0, 9.0 / 40.0, 0, 0, 0, 0, 0},
    {44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0, 0, 0, 0},
    {19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0, 0, 0},
    {9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0, 0},
    {35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0},
}};

// 5th-order weights (= the last row of a: FSAL).
inline constexpr std::array<double, kStages> kB = {
    35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0};

// Embedded 4th-order weights b̂.
inline constexpr std::array<double, kStages> kBHat = {
    5179.0 / 57600.0, 0.0,       7571.0 / 16695.0, 393.0 / 640.0, -92097.0 / 339200.0,
    187.0 / 2100.0,   1.0 / 40.0};

// Dense-output weights d (continuous extension of order 4).
inline constexpr std::array<double, kStages> kD = {
    -12715105075.0 / 11282082432.0,  0.0,
    87487479700.0 / 32700410799.0,   -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0, -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0};

// Order of the embedded (lower-order) solution: the error estimate is O(h^(kEmbeddedOrder+1)).
inline constexpr int kEmbeddedOrder = 4;

}  // namespace dopri5_tableau

class Dopri5 final : public ExplicitRungeKutta {
 public:
  // Throws std::invalid_argument on invalid options (see Integrator) or a formulation other than
  // kIndex1.
  explicit Dopri5(const IntegratorOptions& options);
  ~Dopri5() override;

  int dense_output_order() const override { return 4; }

 private:
  void BuildDenseOutput(double h) override;
  void DoInterpolate(double s, Eigen::VectorXd* q, Eigen::VectorXd* v) const override;

  // Dense output of [t_prev_, t_]: tangent increments for q and values for v (see header).
  double h_dense_ = 0;
  std::array<Eigen::VectorXd, 4> rq_, rv_;
};

}  // namespace saltus::integrators
