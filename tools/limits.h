// Bounds on the numbers a user may give (scene files, the command line, the facade), so that
// non-physical magnitudes and unbounded output are refused as bad input with a clear message
// instead of overflowing inside the solvers (README, "Limits"; docs/scene-format.md).
//
//   every number x:  x = 0 or kMinMagnitude ≤ |x| ≤ kMaxMagnitude   (SI units)
//
// kMaxMagnitude keeps squares and products of two quantities (v², W = G M⁻¹ Gᵀ, m v²) far below
// the overflow of a double (1.8e308); kMinMagnitude refuses denormals (|x| < 2.2e-308) and values
// whose reciprocals (M⁻¹ of a tiny mass) overflow in such products. Real mechanisms use about
// 1e-15 (micro-scale inertias, kg m²) to 1e12 (elastic moduli, Pa).
// A run with an output grid writes (t_end − t₀) / output_step rows; more than kDefaultMaxOutputRows
// need an explicit override (scene key simulation.max_output_rows, Simulation::SetMaxOutputRows).
// The result files of `saltus run` hold at most max_output_bytes bytes (scene key
// simulation.max_output_bytes, --max-output-bytes; default kDefaultMaxOutputBytes, 10 GB). A CSV
// number takes at most kCsvBytesPerNumber bytes (%.17g: sign, 17 digits, point, "e-308", and a
// separator), so the trajectory rows of an output grid take at most
//   rows · (1 + nq + nv) · kCsvBytesPerNumber   bytes,
// the estimate refused before a run starts; the bytes written are counted while it runs.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

namespace saltus::tools {

inline constexpr double kMaxMagnitude = 1e15;
inline constexpr double kMinMagnitude = 1e-30;
inline constexpr double kDefaultMaxOutputRows = 1e7;
inline constexpr double kDefaultMaxOutputBytes = 1e10;
inline constexpr double kCsvBytesPerNumber = 25;

// True when x is finite and 0 or within [kMinMagnitude, kMaxMagnitude] in absolute value.
inline bool WithinMagnitudeBounds(double x) {
  const double a = std::abs(x);
  return a == 0.0 || (a >= kMinMagnitude && a <= kMaxMagnitude);
}

// "0, or between 1e-30 and 1e+15 in absolute value": the rule above, for messages.
inline std::string MagnitudeBoundsText() {
  char text[80];
  std::snprintf(text, sizeof text, "0, or between %g and %g in absolute value", kMinMagnitude,
                kMaxMagnitude);
  return text;
}

// The shortest text that reads back as exactly x ("0.1", "1e+308", "nan"): numbers in messages.
inline std::string NumberText(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, x).ptr;
  return std::string(text, end);
}

}  // namespace saltus::tools
