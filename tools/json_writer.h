// A minimal streaming JSON writer for the run reports (summary.json, last_state.json).
//
// Objects are written one key per line with two-space indentation, arrays on one line. Numbers
// use %.17g so that every double reads back exactly; NaN and ±Inf, which JSON cannot represent,
// are written as null. Strings are escaped per RFC 8259.
//
//   JsonWriter w(out);
//   w.BeginObject().Key("t").Number(1.5).Key("rows").BeginArray().Integer(3).EndArray();
//   w.EndObject();
//
// Misuse (a value without a key inside an object, unbalanced End) throws std::logic_error.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace saltus::tools {

// %.17g: shortest fixed width that round-trips every double. Formatted by std::to_chars with
// precision 17, which the standard defines as printf's %.17g in the C locale (the same text,
// without printf's multi-precision digit generation).
std::string FormatDouble(double x);
// Appends FormatDouble(x) to *out without a temporary string (the writers' rows).
void AppendDouble(double x, std::string* out);

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view value);
  JsonWriter& Number(double value);  // null when not finite
  JsonWriter& Integer(long long value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();

  // True once the top-level value is complete.
  bool done() const { return stack_.empty() && wrote_root_; }

 private:
  struct Level {
    bool is_object;
    bool compact;  // arrays, and anything inside an array, stay on one line
    bool empty = true;
  };
  void BeforeValue();
  void Open(bool is_object, char bracket);
  void Close(bool is_object, char bracket);
  void Indent(std::size_t depth);
  void WriteEscaped(std::string_view s);

  std::ostream& out_;
  std::vector<Level> stack_;
  bool after_key_ = false;
  bool wrote_root_ = false;
};

}  // namespace saltus::tools
