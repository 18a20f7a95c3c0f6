// Reads the arrays of a .vtp frame written by tools::PolyData (binary appended, zlib, UInt64
// headers) back to numbers, following VTK's XML conventions (VTK file formats, "XML File
// Formats": the offset of a DataArray counts from the byte after '_' in <AppendedData>; each
// array is a header of UInt64 block count, block size, last partial block size and compressed
// block sizes, then the zlib blocks), without VTK or ParaView.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

namespace saltus::tools::test_support {

// The values of the first DataArray named `name` in the .vtp text at or after byte `from`, as
// doubles (Float64, Int32 and Int64 arrays). A failed expectation and an empty vector when there
// is none.
inline std::vector<double> VtpArray(const std::string& vtp, const std::string& name,
                                    std::size_t from = 0) {
  const std::regex element("<DataArray type=\"([A-Za-z0-9]+)\" Name=\"" + name +
                           "\"[^>]*format=\"appended\" offset=\"([0-9]+)\"");
  std::smatch m;
  const std::size_t xml_end = vtp.find("<AppendedData encoding=\"raw\">");
  EXPECT_NE(xml_end, std::string::npos);
  const std::string xml = vtp.substr(from, xml_end - from);
  if (!std::regex_search(xml, m, element)) {
    ADD_FAILURE() << "no appended DataArray " << name;
    return {};
  }
  const std::string type = m[1].str();
  const std::size_t base = vtp.find('_', xml_end) + 1;
  const char* p = vtp.data() + base + std::stoull(m[2].str());
  const auto word = [&](std::size_t i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * i, 8);
    return w;
  };
  const std::uint64_t blocks = word(0), block_size = word(1), last = word(2);
  std::string bytes;
  const char* data = p + 8 * (3 + blocks);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t compressed = word(3 + b);
    uLongf size = static_cast<uLongf>(b + 1 == blocks && last != 0 ? last : block_size);
    std::string block(size, '\0');
    EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(block.data()), &size,
                         reinterpret_cast<const Bytef*>(data), static_cast<uLong>(compressed)),
              Z_OK)
        << name;
    bytes += block.substr(0, size);
    data += compressed;
  }
  std::vector<double> values;
  const auto decode = [&](auto zero) {
    using T = decltype(zero);
    for (std::size_t i = 0; i + sizeof(T) <= bytes.size(); i += sizeof(T)) {
      T x;
      std::memcpy(&x, bytes.data() + i, sizeof(T));
      values.push_back(static_cast<double>(x));
    }
  };
  if (type == "Float64") {
    decode(double{});
  } else if (type == "Int32") {
    decode(std::int32_t{});
  } else if (type == "Int64") {
    decode(std::int64_t{});
  } else {
    ADD_FAILURE() << "type " << type << " of " << name;
  }
  return values;
}

}  // namespace saltus::tools::test_support
