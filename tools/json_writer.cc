#include "tools/json_writer.h"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

namespace saltus::tools {

namespace {

// Longest %.17g text: sign, 17 digits, point, "e-308" (25 characters).
constexpr std::size_t kFormattedDoubleCapacity = 32;

__extension__ typedef unsigned __int128 Uint128;  // (GCC/Clang; __extension__: -Wpedantic)

// 10^k, k = 0 … kMaxPower: m 10^k < 2^128 for every m < 2^53 (10^22 < 2^73.1).
constexpr int kMaxPower = 22;
constexpr std::array<Uint128, kMaxPower + 1> kPowersOfTen = [] {
  std::array<Uint128, kMaxPower + 1> p{};
  p[0] = 1;
  for (int k = 1; k <= kMaxPower; ++k)
    p[static_cast<std::size_t>(k)] = p[static_cast<std::size_t>(k - 1)] * 10;
  return p;
}();
constexpr std::uint64_t kTenTo16 = 10'000'000'000'000'000ULL, kTenTo17 = 10 * kTenTo16;

// The 17 significant digits of |x| = m 2^e (m < 2^53, −128 < e < 0) at decimal exponent X:
// N = |x| 10^(16 − X) rounded to the nearest integer, ties to even (the rounding of printf in
// the default mode, and of std::to_chars), exactly: m 10^p < 2^128 and the shift by −e is exact,
// its remainder decides the rounding. X starts at the estimate floor((e + 52) log₁₀2) ≤ ⌊log₁₀|x|⌋
// and grows while N has 18 digits (a low estimate, or a carry to 10^17). False when p = 16 − X
// would leave the exact range (|x| < 1e-6 or so).
bool SeventeenDigits(std::uint64_t m, int e, std::uint64_t* digits, int* exponent) {
  int X = ((e + 52) * 78913) >> 18;  // floor((e + 52) log₁₀2), exact for |e + 52| < 2^11
  for (;;) {
    const int p = 16 - X;
    if (p < 0 || p > kMaxPower) return false;
    const Uint128 r = static_cast<Uint128>(m) * kPowersOfTen[static_cast<std::size_t>(p)];
    const int s = -e;
    std::uint64_t n = static_cast<std::uint64_t>(r >> s);
    const Uint128 rest = r & ((static_cast<Uint128>(1) << s) - 1);
    const Uint128 half = static_cast<Uint128>(1) << (s - 1);
    if (rest > half || (rest == half && (n & 1) != 0)) ++n;
    if (n < kTenTo17) {
      *digits = n;
      *exponent = X;
      return n >= kTenTo16;
    }
    ++X;
  }
}

// %.17g of x ≠ 0, finite, with |x| < 2^53 and |x| above about 1e-6 (the exact 128-bit path of
// SeventeenDigits), into buffer; nullptr for other values (std::to_chars formats those). The
// text follows C11 7.21.6.1 for %g at precision P = 17: with X the decimal exponent of the
// rounded value, fixed notation with P − 1 − X decimals when −4 ≤ X < P, else d.ddde±XX;
// trailing zeros and a trailing point removed.
char* FormatSeventeen(double x, char* out) {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7FF);
  if (biased == 0 || biased == 0x7FF) return nullptr;  // subnormal, Inf, NaN
  const std::uint64_t m = (bits & ((1ULL << 52) - 1)) | (1ULL << 52);
  const int e = biased - 1075;
  if (e >= 0 || e <= -128) return nullptr;
  std::uint64_t n = 0;
  int X = 0;
  if (!SeventeenDigits(m, e, &n, &X)) return nullptr;
  char d[17];
  for (int k = 16; k >= 0; --k) {
    d[k] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  int last = 16;  // the last nonzero digit (d[0] ≠ 0)
  while (d[last] == '0') --last;
  if (x < 0) *out++ = '-';
  if (X >= 0 && X < 17) {
    for (int k = 0; k <= X; ++k) *out++ = d[k];
    if (last > X) {
      *out++ = '.';
      for (int k = X + 1; k <= last; ++k) *out++ = d[k];
    }
  } else if (X < 0 && X >= -4) {
    *out++ = '0';
    *out++ = '.';
    for (int k = X; k < -1; ++k) *out++ = '0';
    for (int k = 0; k <= last; ++k) *out++ = d[k];
  } else {
    *out++ = d[0];
    if (last > 0) {
      *out++ = '.';
      for (int k = 1; k <= last; ++k) *out++ = d[k];
    }
    *out++ = 'e';
    *out++ = X < 0 ? '-' : '+';
    const int a = X < 0 ? -X : X;  // < 100 here
    *out++ = static_cast<char>('0' + a / 10);
    *out++ = static_cast<char>('0' + a % 10);
  }
  return out;
}

std::string_view Format(double x, char (&buffer)[kFormattedDoubleCapacity]) {
  // Exact zeros (untouched coordinates: a planar ball's x, θ and their rates) without the digit
  // generation: the same text, "0" or "-0".
  if (x == 0) return std::signbit(x) ? "-0" : "0";
  if (const char* end = FormatSeventeen(x, buffer)) {
    return {buffer, static_cast<std::size_t>(end - buffer)};
  }
  const std::to_chars_result r =
      std::to_chars(buffer, buffer + kFormattedDoubleCapacity, x, std::chars_format::general, 17);
  return {buffer, static_cast<std::size_t>(r.ptr - buffer)};
}

}  // namespace

std::string FormatDouble(double x) {
  char buffer[kFormattedDoubleCapacity];
  return std::string(Format(x, buffer));
}

void AppendDouble(double x, std::string* out) {
  char buffer[kFormattedDoubleCapacity];
  out->append(Format(x, buffer));
}

void JsonWriter::Indent(std::size_t depth) {
  out_ << '\n';
  for (std::size_t i = 0; i < depth; ++i) out_ << "  ";
}

void JsonWriter::BeforeValue() {
  if (stack_.empty()) {
    if (wrote_root_) throw std::logic_error("JsonWriter: a second top-level value");
    wrote_root_ = true;
    return;
  }
  Level& level = stack_.back();
  if (level.is_object) {
    if (!after_key_) throw std::logic_error("JsonWriter: value without a key inside an object");
    after_key_ = false;
    return;
  }
  if (!level.empty) out_ << ", ";
  level.empty = false;
}

void JsonWriter::Open(bool is_object, char bracket) {
  BeforeValue();
  const bool compact = !stack_.empty() && (stack_.back().compact || !stack_.back().is_object);
  out_ << bracket;
  stack_.push_back({is_object, compact || !is_object});
}

void JsonWriter::Close(bool is_object, char bracket) {
  if (stack_.empty() || stack_.back().is_object != is_object || after_key_) {
    throw std::logic_error("JsonWriter: unbalanced End");
  }
  const Level level = stack_.back();
  stack_.pop_back();
  if (!level.empty && !level.compact) Indent(stack_.size());
  out_ << bracket;
  if (stack_.empty()) out_ << '\n';
}

JsonWriter& JsonWriter::BeginObject() {
  Open(true, '{');
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  Close(true, '}');
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Open(false, '[');
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  Close(false, ']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  if (stack_.empty() || !stack_.back().is_object || after_key_) {
    throw std::logic_error("JsonWriter: key outside an object");
  }
  Level& level = stack_.back();
  if (!level.empty) out_ << ',';
  if (level.compact) {
    if (!level.empty) out_ << ' ';
  } else {
    Indent(stack_.size());
  }
  level.empty = false;
  WriteEscaped(key);
  out_ << ": ";
  after_key_ = true;
  return *this;
}

void JsonWriter::WriteEscaped(std::string_view s) {
  out_ << '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\r':
        out_ << "\\r";
        break;
      case '\t':
        out_ << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out_ << buffer;
        } else {
          out_ << c;
        }
    }
  }
  out_ << '"';
}

JsonWriter& JsonWriter::String(std::string_view value) {
  BeforeValue();
  WriteEscaped(value);
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  BeforeValue();
  if (std::isfinite(value)) {
    out_ << FormatDouble(value);
  } else {
    out_ << "null";
  }
  return *this;
}

JsonWriter& JsonWriter::Integer(long long value) {
  BeforeValue();
  out_ << value;
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ << (value ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_ << "null";
  return *this;
}

}  // namespace saltus::tools
