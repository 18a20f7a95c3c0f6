#include "engine/time_profile.h"

#include <cmath>
#include <numbers>

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
    case Kind::kSpinUp: {
      const double ts = duration, k = rate / duration;
      if (t <= 0.0) return {value0, 0.0, 0.0};
      if (t >= ts) return {value0 + rate * (t - 0.5 * ts), rate, 0.0};
      const double w = 2.0 * std::numbers::pi / ts;
      return {value0 + k * (0.5 * t * t + (std::cos(w * t) - 1.0) / (w * w)),
              k * (t - std::sin(w * t) / w), k * (1.0 - std::cos(w * t))};
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
  if (p.kind == TimeProfile::Kind::kSpinUp) {
    validation::RequirePositive(label, "profile duration", p.duration);
  }
}

}  // namespace saltus::engine
