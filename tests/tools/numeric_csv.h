// A CSV file of numbers with a header line (trajectory.csv, reactions.csv of `saltus run`, the
// reference data of tests/events/data), read for the tests. Leading lines that start with '#' (a
// data file's source) are skipped.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace saltus::tools::test_support {

struct NumericCsv {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  // Index of the column `name` (a failed expectation, and header.size(), when there is none).
  std::size_t Column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << "no column " << name;
    return static_cast<std::size_t>(it - header.begin());
  }
};

inline NumericCsv ReadNumericCsv(const std::filesystem::path& path) {
  NumericCsv csv;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line) && !line.empty() && line[0] == '#') {
  }
  if (!line.empty()) {
    std::stringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) csv.header.push_back(f);
  }
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) row.push_back(std::stod(f));
    csv.rows.push_back(row);
  }
  return csv;
}

}  // namespace saltus::tools::test_support
