// JsonWriter: layout, escaping, exact numbers, null for non-finite values, misuse detection.
#include "tools/json_writer.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

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

// FormatDouble is std::to_chars with precision 17, which the standard defines as printf's %.17g
// (C locale): the same text on random bit patterns (every exponent, subnormals, NaN payloads),
// round numbers, and the values at the edges of the format (the shortest and longest texts, the
// switch between fixed and exponent notation at 1e-5 and 1e17).
TEST(JsonWriterTest, FormatDoubleIsPrintfPercent17g) {
  std::vector<double> values = {0.0,
                                -0.0,
                                1.0,
                                -1.0,
                                0.1,
                                1e-5,
                                9.9999999999999991e-6,
                                1e16,
                                1e17,
                                123456789012345678.0,
                                -2.5e-300,
                                std::numeric_limits<double>::min(),
                                std::numeric_limits<double>::denorm_min(),
                                -std::numeric_limits<double>::max(),
                                std::numeric_limits<double>::infinity(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 random(20261128);
  for (int k = 0; k < 20000; ++k) values.push_back(std::bit_cast<double>(random()));
  for (int k = -30; k <= 30; ++k) values.push_back(std::ldexp(1.0, k) / 3.0);
  for (const double x : values) {
    char expected[40];
    std::snprintf(expected, sizeof expected, "%.17g", x);
    ASSERT_EQ(FormatDouble(x), expected) << std::bit_cast<std::uint64_t>(x);
    std::string appended = "t=";
    AppendDouble(x, &appended);
    ASSERT_EQ(appended, std::string("t=") + expected);
  }
}

// FormatDouble's exact path for 1e-6 ≲ |x| < 2^53 (the numbers of trajectories) gives printf's
// text too: random mantissas at every binary exponent of that range and around its ends, the
// powers of ten and their neighbours (where the decimal exponent changes, and the switch to
// exponent notation below 1e-4), numbers that round up to the next power of ten, and exact ties
// at the 17th digit (k + 1/4 with ulp 1/4 has 18 digits ending in 5: printf rounds to even).
TEST(JsonWriterTest, FormatDoubleOfTrajectoryNumbersIsPrintfPercent17g) {
  std::vector<double> values;
  std::mt19937_64 random(20261129);
  std::uniform_int_distribution<std::uint64_t> mantissa(0, (std::uint64_t{1} << 52) - 1);
  for (int exponent = -40; exponent <= 56; ++exponent) {
    for (int k = 0; k < 400; ++k) {
      const std::uint64_t bits =
          (static_cast<std::uint64_t>(exponent + 1023) << 52) | mantissa(random);
      const double x = std::bit_cast<double>(bits);
      values.push_back(k % 2 == 0 ? x : -x);
    }
  }
  for (int k = -12; k <= 17; ++k) {
    const double p = std::pow(10.0, k);
    values.insert(values.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, 1e300), -p,
                                 9.99999999999999999 * p, 0.99999999999999994 * p});
  }
  for (std::uint64_t k = 0; k < 2000; ++k) {
    const double base = std::ldexp(1.0, 50) + static_cast<double>(k * 1000003);  // ulp 1/4
    values.insert(values.end(), {base + 0.25, base + 0.75, -(base + 0.25)});
  }
  for (const double x : values) {
    char expected[40];
    std::snprintf(expected, sizeof expected, "%.17g", x);
    ASSERT_EQ(FormatDouble(x), expected) << std::bit_cast<std::uint64_t>(x);
  }
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
