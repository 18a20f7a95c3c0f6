// Helpers shared by the bench drivers (C++17: the Siconos drivers build as C++17).
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace saltus::bench {

// `text` as a number in (lo, hi], or nothing (not a number, trailing characters, out of range).
inline std::optional<double> ParseInRange(const std::string& text, double lo = 0.0,
                                          double hi = std::numeric_limits<double>::max()) {
  char* end = nullptr;
  const double x = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(x) || !(x > lo && x <= hi)) {
    return std::nullopt;
  }
  return x;
}

// Writes `header` and one line per row (%.17g, comma-separated) to `path`; throws
// std::runtime_error naming the file when it cannot be opened.
template <std::size_t N>
void WriteCsvRows(const std::string& path, const char* header,
                  const std::vector<std::array<double, N>>& rows) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw std::runtime_error("cannot write '" + path + "'");
  std::fprintf(f, "%s\n", header);
  for (const std::array<double, N>& r : rows) {
    for (std::size_t i = 0; i < N; ++i) std::fprintf(f, i ? ",%.17g" : "%.17g", r[i]);
    std::fprintf(f, "\n");
  }
  std::fclose(f);
}

}  // namespace saltus::bench
