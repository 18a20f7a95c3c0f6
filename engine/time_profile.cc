#include "engine/time_profile.h"

#include <cmath>

#include "engine/validation.h"

namespace saltus::engine {

Eigen::Vector3d TimeProfile::Evaluate(double t) const {
  switch (kind) {
    case Kind::kConstantRate:
      return {value0 + rate * t, rate, 0.0};
    case Kind::kPolynomial: {
      // Horner for the value and both derivatives.
      double p = 0.0, dp = 0.0, ddp = 0.0;
      for (auto it = coefficients.rbegin(); it != coefficients.rend(); ++it) {
        ddp = ddp * t + 2.0 * dp;
        dp = dp * t + p;
        p = p * t + *it;
      }
      return {p, dp, ddp};
    }
    case Kind::kSine: {
      const double arg = frequency * t + phase;
      return {value0 + amplitude * std::sin(arg), amplitude * frequency * std::cos(arg),
              -amplitude * frequency * frequency * std::sin(arg)};
    }
  }
  return Eigen::Vector3d::Zero();
}

void ValidateProfile(const std::string& label, const TimeProfile& p) {
  validation::RequireFinite(label, "profile value0", p.value0);
  validation::RequireFinite(label, "profile rate", p.rate);
  validation::RequireFinite(label, "profile amplitude", p.amplitude);
  validation::RequireFinite(label, "profile frequency", p.frequency);
  validation::RequireFinite(label, "profile phase", p.phase);
  for (double c : p.coefficients) validation::RequireFinite(label, "profile coefficient", c);
}

}  // namespace saltus::engine
