// JsonWriter: layout, escaping, exact numbers, null for non-finite values, misuse detection.
#include "tools/json_writer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace saltus::tools {
namespace {

TEST(JsonWriterTest, ObjectsOneKeyPerLineArraysInline) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  w.Key("name").String("ball");
  w.Key("n").Integer(3);
  w.Key("ok").Bool(true);
  w.Key("list").BeginArray().Integer(1).Integer(2).EndArray();
  w.Key("empty").BeginObject().EndObject();
  w.Key("inner").BeginObject().Key("a").Null().EndObject();
  w.Key("rows").BeginArray().BeginObject().Key("x").Integer(1).Key("y").Integer(2).EndObject();
  w.EndArray();
  w.EndObject();
  EXPECT_TRUE(w.done());
  EXPECT_EQ(out.str(),
            "{\n"
            "  \"name\": \"ball\",\n"
            "  \"n\": 3,\n"
            "  \"ok\": true,\n"
            "  \"list\": [1, 2],\n"
            "  \"empty\": {},\n"
            "  \"inner\": {\n"
            "    \"a\": null\n"
            "  },\n"
            "  \"rows\": [{\"x\": 1, \"y\": 2}]\n"
            "}\n");
}

TEST(JsonWriterTest, StringsAreEscaped) {
  std::ostringstream out;
  JsonWriter(out).String("a\"b\\c\nd\te\x01");
  EXPECT_EQ(out.str(), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
}

TEST(JsonWriterTest, NumbersRoundTripExactly) {
  for (const double x : {0.1, 1.0 / 3.0, -2.5e-300, 6.02214076e23, 0.0}) {
    std::ostringstream out;
    JsonWriter(out).Number(x);
    // Bit-exact: %.17g identifies every double uniquely.
    EXPECT_EQ(std::bit_cast<std::uint64_t>(std::strtod(out.str().c_str(), nullptr)),
              std::bit_cast<std::uint64_t>(x))
        << out.str();
  }
  EXPECT_EQ(FormatDouble(0.1), "0.10000000000000001");
  EXPECT_EQ(FormatDouble(2.0), "2");
}

TEST(JsonWriterTest, NonFiniteNumbersAreNull) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginArray()
      .Number(std::numeric_limits<double>::quiet_NaN())
      .Number(std::numeric_limits<double>::infinity())
      .EndArray();
  EXPECT_EQ(out.str(), "[null, null]\n");
}

TEST(JsonWriterTest, MisuseThrows) {
  std::ostringstream out;
  JsonWriter w(out);
  w.BeginObject();
  EXPECT_THROW(w.Integer(1), std::logic_error);  // value without a key
  EXPECT_THROW(w.EndArray(), std::logic_error);  // wrong bracket
  w.Key("a");
  EXPECT_THROW(w.Key("b"), std::logic_error);     // two keys in a row
  EXPECT_THROW(w.EndObject(), std::logic_error);  // key without a value
}

}  // namespace
}  // namespace saltus::tools
