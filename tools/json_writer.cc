#include "tools/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace saltus::tools {

namespace {

// Longest %.17g text: sign, 17 digits, point, "e-308" (25 characters).
constexpr std::size_t kFormattedDoubleCapacity = 32;

std::string_view Format(double x, char (&buffer)[kFormattedDoubleCapacity]) {
  // Exact zeros (untouched coordinates: a planar ball's x, θ and their rates) without the digit
  // generation: the same text, "0" or "-0".
  if (x == 0) return std::signbit(x) ? "-0" : "0";
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
