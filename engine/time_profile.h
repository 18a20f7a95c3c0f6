// Scalar functions of time with exact first and second derivatives, for rheonomic drivers and
// time-dependent loads of the planar and spatial models (engine/planar_model.h,
// engine/spatial_model.h): a driver row g(q) − φ(t) = 0 needs ∂g/∂t = −φ̇ and, in γ, −φ̈ exactly.
#pragma once

#include <Eigen/Core>
#include <string>
#include <vector>

namespace saltus::engine {

// A scalar function of time with exact first and second derivatives.
//   kConstantRate  φ = value0 + rate · t
//   kPolynomial    φ = Σ_k coefficients[k] t^k
//   kSine          φ = value0 + amplitude · sin(frequency · t + phase)   (frequency in rad/s)
//   kSpinUp        a smooth spin-up from rest to the rate Ω_s = rate over T_s = duration
//                  (Kane, Ryan & Banerjee, J. Guidance 10 (1987), eq. 47):
//                    φ̇ = (Ω_s/T_s) (t − (T_s/2π) sin(2πt/T_s))  for 0 ≤ t < T_s, Ω_s after,
//                    φ = value0 + (Ω_s/T_s) (t²/2 + (T_s/2π)² (cos(2πt/T_s) − 1)), then
//                    value0 + Ω_s (t − T_s/2); φ, φ̇, φ̈ are continuous (φ̈(T_s) = 0).
//                  For t < 0 the profile is at rest (φ = value0).
struct TimeProfile {
  enum class Kind { kConstantRate, kPolynomial, kSine, kSpinUp };
  Kind kind = Kind::kConstantRate;
  double value0 = 0.0;
  double rate = 0.0;
  std::vector<double> coefficients;
  double amplitude = 0.0;
  double frequency = 0.0;
  double phase = 0.0;
  double duration = 0.0;  // kSpinUp: T_s (s), > 0
  // φ(t), φ̇(t), φ̈(t).
  Eigen::Vector3d Evaluate(double t) const;
};

// What a driver prescribes (planar and spatial models): a joint angle or a joint displacement.
enum class DriverKind { kAngle, kDisplacement };

// Throws std::invalid_argument "<label>: profile <field> must be finite, got …" if any parameter
// of p is not finite (and "… must be > 0" for a spin-up duration that is not).
void ValidateProfile(const std::string& label, const TimeProfile& p);

}  // namespace saltus::engine
